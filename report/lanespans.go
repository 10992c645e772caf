package report

import (
	"servebench/record"
)

// srvPhases are a request's phases as its server's span tells them (vLLM's llm_request):
// the span's start (when the server saw the request), the end of its queue, and its first
// token, all ns since t0 on the server's wall clock.
type srvPhases struct {
	start, queued, first int64
}

// segs splits sent → first (the client's first token) at the server's phases: the network
// before the server, its queue, its prefill (with the rest of its TTFT), and the first
// token's way to the client. Each boundary is kept within [sent, first], so clocks that
// disagree squeeze a phase to nothing rather than draw it backwards.
func (p *srvPhases) segs(sent, first int64) []seg {
	clamp := func(x, lo int64) int64 { return min(max(x, lo), first) }
	a := clamp(p.start, sent)
	b := clamp(p.queued, a)
	c := clamp(p.first, b)
	out := []seg{{segNet, sent, a}, {segSrvQueue, a, b}, {segSrvPrefill, b, c}, {segNet, c, first}}
	kept := out[:0]
	for _, s := range out {
		if s.b > s.a {
			kept = append(kept, s)
		}
	}
	return kept
}

// joinSpans gives the set's requests their server phases from the header's server spans,
// joined by trace id; requests without a span keep the client's view.
func (l *laneSet) joinSpans(h *record.Header) {
	if h == nil || len(h.Spans) == 0 {
		return
	}
	by := map[string]*record.Span{}
	for i := range h.Spans {
		for j := range h.Spans[i].Spans {
			s := &h.Spans[i].Spans[j]
			if _, ok := s.Attrs["gen_ai.latency.time_to_first_token"]; ok {
				by[s.Trace] = s
			}
		}
	}
	for i := range l.reqs {
		q := &l.reqs[i]
		s, ok := by[q.trace]
		if !ok || q.trace == "" {
			continue
		}
		queue := int64(s.Attrs["gen_ai.latency.time_in_queue"] * 1e9)
		ttft := int64(s.Attrs["gen_ai.latency.time_to_first_token"] * 1e9)
		q.srv = &srvPhases{start: s.Start, queued: s.Start + queue, first: s.Start + ttft}
	}
}
