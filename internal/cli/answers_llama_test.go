package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// A real llama.cpp server honours response_format with a grammar: every answer that had room
// to finish meets the schema, and every answer cut by max_tokens is counted invalid and named.
// It skips when the server cannot be set up.
func TestLlamaCppResponseFormat(t *testing.T) {
	t.Parallel()
	url := llamaTiny2(t)
	sch := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(sch, []byte(`{"type":"object","properties":{"a":{"enum":["x","y"]},"n":{"type":"integer"}},"required":["a","n"],"additionalProperties":false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		out                  string
		minInvalid, maxInval float64
	}{{"96", 0, 0.1}, {"3", 1, 1}} {
		s, recs := runAnswers(t, url, "--api", "openai-chat", "--response-format", "json-schema:"+sch, "--requests", "20",
			"--output-tokens", tc.out, "--concurrency", "2", "--input-tokens", "32")
		a := s.Answers
		if a.Checked != 20 || a.InvalidShare == nil || *a.InvalidShare < tc.minInvalid || *a.InvalidShare > tc.maxInval {
			t.Errorf("--output-tokens %s: %d checked, invalid share %v; want 20 checked, %v to %v invalid", tc.out, a.Checked, a.InvalidShare, tc.minInvalid, tc.maxInval)
		}
		for _, r := range recs {
			if r.valid != nil && !*r.valid && r.violation == "" {
				t.Errorf("an invalid answer without its violation: %+v", r)
			}
		}
	}
}
