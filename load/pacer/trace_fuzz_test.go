package pacer

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// FuzzReadTrace: no --trace file panics the reader, every error is one line without a Go
// type, and every accepted offset fits a time.Duration.
func FuzzReadTrace(f *testing.F) {
	for _, s := range []string{`{"t": 0}` + "\n" + `{"t": 1.5, "input_tokens": 3}`, `{"t": 1e13}`, "\xEF\xBB\xBF{\"t\": \"x\"}",
		`{"t": 1, "output_tokens": 1e30}`, "\n\n", `{"t": -0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		as, err := ReadTrace(bytes.NewReader(data), "t.jsonl")
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\r\n") || strings.Contains(msg, "Go struct") || strings.Contains(msg, "of type ") {
				t.Fatalf("error: %q", msg)
			}
			return
		}
		offs := NewTrace(as).Offsets
		for i, o := range offs {
			if o < 0 || o > time.Duration(MaxTraceSeconds)*time.Second || (i > 0 && o < offs[i-1]) {
				t.Fatalf("offset %d: %v", i, o)
			}
		}
	})
}
