package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run held to validity rules shows its verdict, each rule's figure and the shortfall in the
// text, JSON, Markdown and HTML reports (from its run-end line).
func TestValidityInEveryFormat(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "base.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// the run-end line with a verdict, as run --slo ttft=2s@p99 writes it
	end := `{"servebench_run_end":{"run":0,"validity":{"verdict":"INVALID","rules":"custom","checks":[` +
		`{"rule":"p99 TTFT ≤ 2s (early stopping, confidence 0.99)","pass":false,"figure":"0 of 300 over the limit","shortfall":"p99 TTFT needs 159 more requests at this over-limit count","measured":300,"needed":459}]}}}`
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, `{"servebench_run_end":`) {
			lines[i] = end
		}
	}
	data := strings.Join(lines, "\n") + "\n"
	for _, f := range []string{"text", "json", "md", "html"} {
		var b bytes.Buffer
		if err := Render(&b, f, readerInput(t, "base.jsonl", strings.NewReader(data))); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"INVALID", "needs 159 more requests"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s: lacks %q", f, want)
			}
		}
	}
}
