package runspec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"servebench/workload"
)

// field returns the field of s whose key (YAML tag, the flag's name) is key. The API key has
// no YAML key (it is never written to a file) but has a flag.
func field(s *Spec, key string) (reflect.Value, bool) {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := range t.NumField() {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == key || (key == "api-key" && t.Field(i).Name == "APIKey") {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// Keys are every setting's key, in declaration order.
func Keys() []string {
	t := reflect.TypeFor[Spec]()
	var out []string
	for i := range t.NumField() {
		if !t.Field(i).IsExported() {
			continue
		}
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "-" {
			tag = "api-key"
		}
		out = append(out, tag)
	}
	return out
}

// Copy sets key in s to its value in src, and marks it set.
func (s *Spec) Copy(src *Spec, key string) {
	dv, ok := field(s, key)
	if !ok {
		return
	}
	sv, _ := field(src, key)
	dv.Set(sv)
	s.MarkSet(key)
}

// Value prints the setting key of s, as a change list shows it.
func (s *Spec) Value(key string) string {
	v, ok := field(s, key)
	if !ok {
		return ""
	}
	return fmt.Sprint(v.Interface())
}

// clear sets key back to its zero value and forgets that it was set.
func (s *Spec) clear(key string) {
	if v, ok := field(s, key); ok {
		v.Set(reflect.Zero(v.Type()))
	}
	s.unset(key)
}

// MaxConfigBytes bounds a --config file: a page of settings is a few kilobytes, and a path
// to /dev/zero or an endless pipe must be an error, not a read until memory runs out.
const MaxConfigBytes = 1 << 20

// LoadFile reads a YAML file whose keys are the flag names into s, marking each key it sets.
// Unknown keys are errors, so that a typo cannot silently change nothing. The file is read
// once (a pipe works), at most MaxConfigBytes, and the read stops when ctx ends (the error
// then wraps ctx's).
func (s *Spec) LoadFile(ctx context.Context, path string) error {
	b, err := readConfig(ctx, path)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("--config: %w", err)
		}
		return Usagef("--config: %v", err)
	}
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF")) // a UTF-8 BOM, as Windows editors write
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(s); err != nil && !errors.Is(err, io.EOF) {
		return Usagef("--config %s: %s", path, strings.Join(strings.Fields(err.Error()), " "))
	}
	var keys map[string]any
	_ = yaml.Unmarshal(b, &keys)
	for k := range keys {
		s.MarkSet(k)
	}
	return nil
}

func readConfig(ctx context.Context, path string) ([]byte, error) {
	in, err := workload.OpenInput(ctx, path, MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return io.ReadAll(in)
}
