package report

import (
	"strings"
	"testing"

	"servebench/record"
)

// TestSwimlaneServerPhases checks that a joined span splits sent → first token into the
// server's phases, that a request without one keeps the client's view, and that clocks
// that disagree squeeze a phase rather than draw it backwards.
func TestSwimlaneServerPhases(t *testing.T) {
	mk := func(id int, trace string) record.Record {
		return record.Record{ID: id, Phase: record.PhaseMeasure, Scheduled: 1000, Dispatched: 1000, Sent: 1000,
			Headers: 1100, Events: []record.Event{{T: 5000, N: 1}, {T: 6000, N: 1}}, Done: 6000, TraceID: trace}
	}
	var set *laneSet
	for _, r := range []record.Record{mk(0, "a"), mk(1, "b"), mk(2, "")} {
		set = set.add(&r)
	}
	attrs := map[string]float64{"gen_ai.latency.time_in_queue": 1e-6, "gen_ai.latency.time_to_first_token": 3e-6}
	h := &record.Header{Spans: []record.ServerSpans{{Spans: []record.Span{
		{Trace: "a", Name: "llm_request", Start: 1500, End: 5800, Attrs: attrs},
		{Trace: "b", Name: "llm_request", Start: 500, End: 5800, Attrs: attrs}, // server clock behind
	}}}}
	set.joinSpans(h)
	want := map[int]string{
		0: "network / gateway 0.0005 ms; server queue 0.001 ms; server prefill 0.002 ms; network / gateway 0.0005 ms; decode",
		1: "server queue 0.0005 ms; server prefill 0.002 ms; network / gateway 0.0015 ms; decode",
		2: "server queue + prefill 0.004 ms; decode",
	}
	for _, q := range set.reqs {
		if got := q.title(); !strings.Contains(got, want[q.id]) {
			t.Errorf("request %d: %q, want it to contain %q", q.id, got, want[q.id])
		}
	}
}
