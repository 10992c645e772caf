package metrics

import (
	"strings"
	"testing"

	"servebench/record"
)

// TestWarmupOverlap: the share of the window before the warmup's last request ended; none
// without a warmup; a point is poor above a quarter.
func TestWarmupOverlap(t *testing.T) {
	const s = int64(1e9)
	rec := func(phase string, sent, done int64) *record.Record {
		return &record.Record{Phase: phase, Sent: sent, Done: done, Status: 200,
			Events: []record.Event{{T: done - 1, N: 1}}, OutputTokens: 1}
	}
	for _, c := range []struct {
		name   string
		recs   []*record.Record
		want   float64
		exists bool
	}{
		{"drained first", []*record.Record{rec("warmup", 0, 2*s), rec("measure", 2*s, 5*s), rec("measure", 3*s, 12*s)}, 0, true},
		{"queued behind", []*record.Record{rec("warmup", 0, 6*s), rec("measure", 2*s, 8*s), rec("measure", 3*s, 12*s)}, 0.4, true},
		{"no warmup", []*record.Record{rec("measure", 2*s, 8*s)}, 0, false},
	} {
		a := NewAccumulator(Options{})
		for _, r := range c.recs {
			a.Add(r)
		}
		got := a.Summary().WarmupOverlap
		if (got != nil) != c.exists || (got != nil && (*got < c.want-1e-9 || *got > c.want+1e-9)) {
			t.Errorf("%s: overlap %v, want %v (exists %v)", c.name, got, c.want, c.exists)
		}
	}
	p := PointSummary{Concurrency: 40, Runs: []RunSummary{{Summary: &Summary{WarmupOverlap: ptr(0.46)}}}}
	if !strings.HasPrefix(p.Poor(), "poor: 46% of its window") {
		t.Errorf("Poor() = %q", p.Poor())
	}
	p.Runs[0].Summary.WarmupOverlap = ptr(0.1)
	if p.Poor() != "" {
		t.Errorf("a 10%% overlap is poor: %q", p.Poor())
	}
}
