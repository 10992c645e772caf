package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRunConfig feeds arbitrary YAML to the --config parser and validation: it must never
// panic, and every rejection must be a usage error (exit 2) on one line.
func FuzzRunConfig(f *testing.F) {
	for _, s := range []string{
		"url: http://127.0.0.1:8000\napi: tgi\ninput-tokens: 16\n",
		"rate: 2\nconcurrency: 3\n",
		"header: [\"Authorization=Bearer x\", \"bad\"]\n",
		"request-timeout: 30s\nidle-timeout: -1s\n",
		"tokenizer: /nonexistent.json\napi: auto\n",
		"extra-body: '{\"a\":1}'\ntemperature: x\n",
		"input-tokns: 1\n", "- a\n- b\n", "{", "",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := defaultRunConfig()
		cmd := newRunCmd(&streams{})
		_, err := effectiveRunConfig(cmd, &cfg, path)
		if err == nil {
			return
		}
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != ExitUsage {
			t.Fatalf("config error is not a usage error: %v", err)
		}
		if strings.TrimSpace(err.Error()) == "" {
			t.Fatal("empty error message")
		}
	})
}
