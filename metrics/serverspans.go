package metrics

import (
	"servebench/record"
)

// vLLM's llm_request span attributes (vllm/tracing.py): times in seconds.
const (
	spanQueue   = "gen_ai.latency.time_in_queue"
	spanTTFT    = "gen_ai.latency.time_to_first_token"
	spanE2E     = "gen_ai.latency.e2e"
	spanPrefill = "gen_ai.latency.time_in_model_prefill"
	spanDecode  = "gen_ai.latency.time_in_model_decode"
)

// Decomposition is TTFT taken apart by the spans the server exported for each request
// (run --otlp-listen), joined to its record by trace id:
//
//	TTFT = before server + server TTFT + to client
//	server TTFT = queue + prefill + server other
//
// Before server = the server span's start − sent: the network and any gateway or router
// before the server saw the request. Server TTFT, queue and prefill are the span's own
// figures (vLLM's gen_ai.latency.time_to_first_token, time_in_queue, time_in_model_prefill);
// server other is what the server's TTFT holds besides them (tokenising, scheduling).
// To client = the client's first content event − (span start + server TTFT): the first
// token's way out. Decode is the span's time_in_model_decode, beside the client's stream.
// Before server and to client read the server's wall clock against the client's, so they
// are exact only when the two clocks agree (one machine, or NTP within the error you
// accept); their sum, TTFT − server TTFT, reads no clock of the server's.
//
// Only requests whose span arrived are counted: a request without one is missing, never
// filled in.
type Decomposition struct {
	// Requests are the completed measured requests that carried a trace id; Joined those
	// with a server span carrying gen_ai.latency.time_to_first_token; Missing the rest.
	Requests, Joined, Missing int
	// per-request distributions in ns over the joined requests
	BeforeServer, Queue, Prefill, ServerOther, ServerTTFT, ToClient, TTFT, Decode, ServerE2E Stat
	// ClockSkew counts joined requests whose before server or to client came out below 0:
	// the server's clock disagrees with the client's by at least that much.
	ClockSkew int
	// Spans in all (a run's other spans included), and those of traces that are none of this
	// servebench's, by name; exports refused; spans dropped over the receiver's bound.
	Received, Other int
	OtherNames      []record.NameCount
	Rejected        int
	Dropped         int
}

// spanReq is what a completed measured request contributes to the decomposition (40 bytes
// a request, kept only when it carried a trace id).
type spanReq struct {
	trace       string
	sent, first int64
}

// addTraced keeps a completed request's trace id and stamps for the join at Summary, when
// the run listened for spans (its config has otlp_listen): every request carries a trace id,
// and a run without a receiver need not hold them.
func (a *Accumulator) addTraced(r *record.Record) {
	if r.TraceID == "" || a.hdr == nil || a.hdr.Config["otlp_listen"] == nil {
		return
	}
	if t, ok := ttft(r); ok {
		a.traced = append(a.traced, spanReq{trace: r.TraceID, sent: r.Sent, first: r.Sent + t})
	}
}

// decomposition joins the header's server spans to the summary's requests; nil when the run
// received no spans at all (no --otlp-listen).
func (a *Accumulator) decomposition() *Decomposition {
	if a.hdr == nil || len(a.hdr.Spans) == 0 {
		return nil
	}
	d := &Decomposition{Requests: len(a.traced)}
	byTrace := map[string]*record.Span{}
	names := map[string]int{}
	for i := range a.hdr.Spans {
		l := &a.hdr.Spans[i]
		d.Received += l.Received
		d.Other += l.Other
		d.Rejected += l.Rejected
		d.Dropped += l.Dropped
		for _, n := range l.OtherNames {
			names[n.Name] += n.Count
		}
		for j := range l.Spans {
			if s := &l.Spans[j]; hasAttr(s, spanTTFT) {
				byTrace[s.Trace] = s
			}
		}
	}
	d.OtherNames = sortedNames(names)
	var before, queue, prefill, other, sttft, toClient, total, decode, e2e sample
	for _, q := range a.traced {
		s, ok := byTrace[q.trace]
		if !ok {
			d.Missing++
			continue
		}
		d.Joined++
		st := s.Attrs[spanTTFT] * 1e9
		b := float64(s.Start - q.sent)
		c := float64(q.first) - (float64(s.Start) + st)
		if b < 0 || c < 0 {
			d.ClockSkew++
		}
		before.add(b)
		toClient.add(c)
		sttft.add(st)
		total.add(float64(q.first - q.sent))
		qu, pf := s.Attrs[spanQueue]*1e9, s.Attrs[spanPrefill]*1e9
		if hasAttr(s, spanQueue) {
			queue.add(qu)
		}
		if hasAttr(s, spanPrefill) {
			prefill.add(pf)
		}
		if hasAttr(s, spanQueue) && hasAttr(s, spanPrefill) {
			other.add(st - qu - pf)
		}
		if hasAttr(s, spanDecode) {
			decode.add(s.Attrs[spanDecode] * 1e9)
		}
		if hasAttr(s, spanE2E) {
			e2e.add(s.Attrs[spanE2E] * 1e9)
		}
	}
	ps := []float64{50, 90, 99}
	d.BeforeServer, d.Queue, d.Prefill, d.ServerOther = before.stat(ps), queue.stat(ps), prefill.stat(ps), other.stat(ps)
	d.ServerTTFT, d.ToClient, d.TTFT, d.Decode, d.ServerE2E = sttft.stat(ps), toClient.stat(ps), total.stat(ps), decode.stat(ps), e2e.stat(ps)
	return d
}

func hasAttr(s *record.Span, k string) bool {
	_, ok := s.Attrs[k]
	return ok
}

// sortedNames lists names by count, the most frequent first, then by name.
func sortedNames(m map[string]int) []record.NameCount {
	var out []record.NameCount
	for n, c := range m {
		out = append(out, record.NameCount{Name: n, Count: c})
	}
	for i := 1; i < len(out); i++ { // insertion sort: a handful of names
		for j := i; j > 0 && (out[j].Count > out[j-1].Count || out[j].Count == out[j-1].Count && out[j].Name < out[j-1].Name); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
