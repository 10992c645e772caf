package report

import (
	"bytes"
	"strings"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// TestRunVerdicts: the block says steady or not, valid or not, and grades the measurement by
// its worst warning; the single-run page opens with it, before the warnings.
func TestRunVerdicts(t *testing.T) {
	s := &metrics.Summary{
		Steadiness: &metrics.Steadiness{Tested: true, Drifts: []metrics.Drift{{Metric: "ttft", Direction: "rose"}}},
		Warnings:   []metrics.Warning{{Level: metrics.Info, Text: "a"}, {Level: metrics.Distorts, Text: "b"}},
		Ends:       []record.RunEnd{{Validity: &record.Validity{Verdict: "INVALID", Rules: "custom"}}},
	}
	got := runVerdicts(s)
	want := []verdictLine{
		{"steady", "NOT STEADY: ttft rose during the window (see the warnings)", "bad"},
		{"valid", "INVALID (custom)", "bad"},
		{"quality", "fair: 1 warning may distort a figure (2 warnings in all)", "unsure"},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	steady := &metrics.Summary{Steadiness: &metrics.Steadiness{Tested: true, Steady: true, Windows: 8,
		Series: []metrics.SeriesCheck{{Metric: "ttft", Tested: true}}}, Warnings: []metrics.Warning{{Level: metrics.Info, Text: "a"}}}
	if v := runVerdicts(steady); v[0].Class != "good" || v[1].Class != "unsure" || v[2].Class != "good" {
		t.Errorf("a steady run with information only: %+v", v)
	}
	if v := qualityVerdict([]metrics.Warning{{Level: metrics.Invalidates}, {Level: metrics.Distorts}}); v.Class != "bad" || !strings.HasPrefix(v.Text, "poor: 1 warning invalidates") {
		t.Errorf("quality with an invalidating warning: %+v", v)
	}
	var page bytes.Buffer
	if err := HTML(&page, header(false), s, nil); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	if i, j := strings.Index(h, `id="run-verdict"`), strings.Index(h, `id="warnings"`); i < 0 || i > j || !strings.Contains(h, "NOT STEADY") {
		t.Errorf("the page does not open with the verdict block (at %d, warnings at %d)", i, j)
	}
}
