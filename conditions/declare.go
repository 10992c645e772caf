package conditions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ParseDeclared reads --condition arguments of the form key=value into declared conditions.
// An empty value is allowed and means "declared unknown" (the user says nobody knows).
func ParseDeclared(args []string) (Set, error) {
	var s Set
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("--condition %q: want key=value", a)
		}
		s.Add(k, strings.TrimSpace(v), Declared)
	}
	return s, nil
}

// LoadFile reads a YAML file of declared conditions. Nested maps are flattened into dotted
// keys, so these two files say the same:
//
//	gpu: {name: NVIDIA H100 80GB HBM3, driver: "550.54"}
//	gpu.name: NVIDIA H100 80GB HBM3
//	gpu.driver: "550.54"
func LoadFile(path string) (Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("conditions file: %w", err)
	}
	defer f.Close()
	// a page of declarations is a few kilobytes; /dev/zero or an endless pipe is an error
	const maxBytes = 1 << 20
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("conditions file %s: %w", path, err)
	case len(b) > maxBytes:
		return nil, fmt.Errorf("conditions file %s: larger than 1 MiB", path)
	}
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF")) // a UTF-8 BOM, as Windows editors write
	var m map[string]any
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("conditions file %s: %v", path, err)
	}
	flat := map[string]string{}
	flatten("", m, flat)
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var s Set
	for _, k := range keys {
		s.Add(k, flat[k], Declared)
	}
	return s, nil
}

func flatten(prefix string, v any, out map[string]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, vv := range t {
			flatten(join(prefix, k), vv, out)
		}
	case nil:
		out[prefix] = ""
	default:
		out[prefix] = fmt.Sprint(t)
	}
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}
