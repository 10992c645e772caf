package metrics

import (
	"servebench/record"
)

// Per-request metrics (docs/design/METRICS.md "Per-request metrics"). Every function takes a completed
// record; ok is false when the metric is undefined for it. Times are int64 ns since t0, and a
// zero time means "did not happen".

// ttft: "TTFT = first content event − sent". Starting at sent keeps the client's own delays
// (goroutine scheduling, connection set-up) out of the server's figure.
func ttft(r *record.Record) (int64, bool) {
	if len(r.Events) == 0 || r.Sent == 0 {
		return 0, false
	}
	return r.Events[0].T - r.Sent, true
}

// ttftDispatch: "TTFT from dispatch = first content event − dispatched" (what vLLM reports:
// it includes connection set-up and client delays).
func ttftDispatch(r *record.Record) (int64, bool) {
	if len(r.Events) == 0 || r.Dispatched == 0 {
		return 0, false
	}
	return r.Events[0].T - r.Dispatched, true
}

// ttftFirstEvent: "TTFT (first event) = first_event − sent" (vLLM's rule for which event
// counts; differs from TTFT when the server sends a role-only chunk first).
func ttftFirstEvent(r *record.Record) (int64, bool) {
	if r.FirstEvent == 0 || r.Sent == 0 {
		return 0, false
	}
	return r.FirstEvent - r.Sent, true
}

// e2eLatency: "E2E latency (vLLM e2el) = last content event − sent".
func e2eLatency(r *record.Record) (int64, bool) {
	if len(r.Events) == 0 || r.Sent == 0 {
		return 0, false
	}
	return r.Events[len(r.Events)-1].T - r.Sent, true
}

// e2eQueue: "E2E including queue = last content event − scheduled": with a concurrency cap or
// a late open-loop sender, latency hidden in the client queue must not vanish.
func e2eQueue(r *record.Record) (int64, bool) {
	if len(r.Events) == 0 || r.Dispatched == 0 {
		return 0, false
	}
	return r.Events[len(r.Events)-1].T - r.Scheduled, true
}

// streamTime: "Stream time = done − sent".
func streamTime(r *record.Record) (int64, bool) {
	if r.Done == 0 || r.Sent == 0 {
		return 0, false
	}
	return r.Done - r.Sent, true
}

// queueTime: "Client queue time = dispatched − scheduled". Scheduled may legitimately be 0
// (an open-loop arrival at offset 0), so only dispatched decides whether it happened.
func queueTime(r *record.Record) (int64, bool) {
	if r.Dispatched == 0 {
		return 0, false
	}
	return r.Dispatched - r.Scheduled, true
}

// clientOverhead = TTFT from dispatch − TTFT = sent − dispatched: the time the request spent
// in our client (connection set-up, writing, goroutine scheduling) before the server could
// act. When it grows, the load generator is the bottleneck.
func clientOverhead(r *record.Record) (int64, bool) {
	if r.Sent == 0 || r.Dispatched == 0 {
		return 0, false
	}
	return r.Sent - r.Dispatched, true
}

// tpotNS: "TPOT = (E2E − TTFT) / (output_tokens − 1), only when output_tokens > 1", in ns.
func tpotNS(r *record.Record, out int) (float64, bool) {
	t, ok1 := ttft(r)
	e, ok2 := e2eLatency(r)
	if !ok1 || !ok2 || out <= 1 {
		return 0, false
	}
	return float64(e-t) / float64(out-1), true
}

// decodeRate: "Decode rate per user = (output_tokens − 1) / (E2E − TTFT), tokens/s".
// Undefined when E2E = TTFT (every token came in the first event).
func decodeRate(r *record.Record, out int) (float64, bool) {
	t, ok1 := ttft(r)
	e, ok2 := e2eLatency(r)
	if !ok1 || !ok2 || out <= 1 || e <= t {
		return 0, false
	}
	return float64(out-1) / (float64(e-t) / 1e9), true
}

// outputTokens returns the request's output token count and its source. When the client
// stored no count and no source, it falls back to the events: the sum of their counts when
// every count is known ("events"), else one per event ("count").
func outputTokens(r *record.Record) (int, string) {
	if r.OutputTokens > 0 || r.OutputTokensSource != "" || len(r.Events) == 0 {
		return r.OutputTokens, r.OutputTokensSource
	}
	sum := 0
	for _, e := range r.Events {
		if e.N <= 0 {
			return len(r.Events), record.SourceCount
		}
		sum += int(e.N)
	}
	return sum, record.SourceEvents
}

// promptTokens returns the prompt token count and its source; without a stored count it
// falls back to the length the workload asked for ("requested").
func promptTokens(r *record.Record) (int, string) {
	if r.PromptTokens == 0 && r.PromptTokensSource == "" && r.InputTokens > 0 {
		return r.InputTokens, record.SourceRequested
	}
	return r.PromptTokens, r.PromptTokensSource
}

// maxGap returns the largest ITL (chunk) gap of a request (0 with fewer than two events).
func maxGap(ev []record.Event) int64 {
	var m int64
	for i := 1; i < len(ev); i++ {
		m = max(m, ev[i].T-ev[i-1].T)
	}
	return m
}
