package report

import (
	"testing"

	"servebench/record"
)

// TestPickConfigByLoad: the pick is the configuration serving the most users within the SLOs,
// not the one completing the most requests per second at a lighter load; a configuration whose
// server failed, or whose sweep is INVALID, is never picked.
func TestPickConfigByLoad(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	end := func(users int, rate float64) *record.SweepEnd {
		return &record.SweepEnd{SLO: "TTFT ≤ 500ms", SLOLoad: &record.SweepPoint{Concurrency: users, RequestThroughput: f(rate)}}
	}
	vs := []configView{
		{run: record.ConfigRun{Name: "np2"}, end: end(1, 8.55)},
		{run: record.ConfigRun{Name: "np4"}, end: end(4, 7.78)},
		{run: record.ConfigRun{Name: "np4b"}, end: end(4, 7.5)},
		{run: record.ConfigRun{Name: "dead", Failure: "died", FailureStage: "run"}, end: end(8, 20)},
		{run: record.ConfigRun{Name: "bad"}, end: &record.SweepEnd{SLO: "TTFT ≤ 500ms", Withheld: "cached"}},
	}
	if got := pickConfig(vs); got != 1 {
		t.Errorf("pick = %d, want 1 (np4: 4 users, the more req/s of the two at 4)", got)
	}
	if got := pickConfig(vs[3:]); got != -1 {
		t.Errorf("pick of a failed and an INVALID configuration = %d, want -1", got)
	}
}
