package runspec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzSpecFile feeds arbitrary YAML to the --config parser and validation: it must never
// panic, never change the spec in Validate, and every rejection must be a usage error on one
// line.
func FuzzSpecFile(f *testing.F) {
	for _, s := range []string{
		"url: http://127.0.0.1:8000\napi: tgi\ninput-tokens: 16\n",
		"rate: 2\nconcurrency: 3\n",
		"header: [\"Authorization=Bearer x\", \"bad\"]\n",
		"request-timeout: 30s\nidle-timeout: -1s\n",
		"tokenizer: /nonexistent.json\napi: auto\n",
		"extra-body: '{\"a\":1}'\ntemperature: x\n",
		"concurrency: 0\n", "requests: -1\n", "url: ftp://127.0.0.1:1\n",
		"input-tokns: 1\n", "- a\n- b\n", "{", "", "\xEF\xBB\xBFrate: 2\n", "temperature: .nan\ntop-p: .inf\n",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		s := Default()
		err := s.LoadFile(context.Background(), path)
		if err == nil {
			before := s.clone()
			err = s.Validate()
			if s.Value("concurrency") != before.Value("concurrency") || s.Value("warmup") != before.Value("warmup") ||
				s.Value("requests") != before.Value("requests") || s.Value("cache-salt") != before.Value("cache-salt") {
				t.Fatal("Validate changed the spec")
			}
		}
		if err == nil {
			return
		}
		if !IsUsage(err) {
			t.Fatalf("config error is not a usage error: %v", err)
		}
		if strings.TrimSpace(err.Error()) == "" {
			t.Fatal("empty error message")
		}
	})
}
