package metrics

import (
	"math"
	"testing"

	"servebench/record"
)

// TestAdapterSummaries: per-adapter figures count each adapter's measured requests and add up
// to the run's; warmup and adapter-less runs add nothing.
func TestAdapterSummaries(t *testing.T) {
	var a Accumulator
	rec := func(id int, adapter, phase, class string) *record.Record {
		base := int64(id) * 1e8
		r := &record.Record{ID: id, Phase: phase, Adapter: adapter, Scheduled: base, Dispatched: base + 1, Sent: base + 2, Done: base + 5e7,
			Events: []record.Event{{T: base + 1e7, N: 1}, {T: base + 2e7, N: 1}, {T: base + 4e7, N: 1}}, OutputTokens: 3, PromptTokens: 10,
			OutputTokensSource: record.SourceServer, PromptTokensSource: record.SourceServer, ErrorClass: class}
		if class != "" {
			r.Events, r.OutputTokens, r.PromptTokens = nil, 0, 0
		}
		return r
	}
	for i, x := range []struct{ adapter, phase, class string }{
		{"b", record.PhaseMeasure, ""}, {"a", record.PhaseMeasure, ""}, {"a", record.PhaseMeasure, ""},
		{"a", record.PhaseWarmup, ""}, {"b", record.PhaseMeasure, record.ErrHTTP4xx},
	} {
		a.Add(rec(i, x.adapter, x.phase, x.class))
	}
	s := a.Summary()
	b := s.BreakdownBy("adapter")
	if b == nil || len(b.Groups) != 2 || b.Groups[0].Value != "a" || b.Groups[1].Value != "b" {
		t.Fatalf("adapters %+v", b)
	}
	ag, bg := b.Groups[0], b.Groups[1]
	ad, bd := ag.Summary, bg.Summary
	if ad.Measured != 2 || ad.Completed != 2 || bd.Completed != 1 || bd.Failed != 1 || ag.Share != 0.5 || ad.OutputTokens != 6 {
		t.Errorf("a %+v, b %+v", ad, bd)
	}
	if ad.TTFT.N != 2 || ad.ITLChunk.N != 4 || ad.TPOT.N != 2 || ad.E2E.N != 2 {
		t.Errorf("a's samples: ttft %d itl %d tpot %d e2e %d", ad.TTFT.N, ad.ITLChunk.N, ad.TPOT.N, ad.E2E.N)
	}
	if math.Abs(*ad.OutputThroughput+*bd.OutputThroughput-*s.OutputThroughput) > 1e-9 {
		t.Errorf("output throughputs %v + %v, run %v", *ad.OutputThroughput, *bd.OutputThroughput, *s.OutputThroughput)
	}
	var plain Accumulator
	plain.Add(rec(0, "", record.PhaseMeasure, ""))
	if s := plain.Summary(); s.Breakdowns != nil {
		t.Errorf("a run without adapters has %+v", s.Breakdowns)
	}
}
