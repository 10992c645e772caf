package bench

import (
	"context"
	"strings"
	"time"

	"servebench/record"
	"servebench/spans"
)

// openSpans gives the requests their trace context unless the run sends none: with
// --no-trace-context, or when the user's own --header traceparent stands for every request
// (one trace id for all requests joins nothing to any one of them). With --otlp-listen it
// starts the receiver of the server's spans.
func (b *Session) openSpans(context.Context) error {
	if b.spec.NoTraceContext || userHeader(b.spec.Headers, spans.TraceParentHeader) {
		if b.spec.OTLPListen != "" {
			b.logf("--otlp-listen: the requests carry the --header traceparent, one trace for all: no span can be joined to its request")
		}
		return nil
	}
	b.traceIDs = spans.NewIDs()
	if addrs := b.spec.OTLPAddrs(); addrs != nil {
		r, err := spans.Listen(b.traceIDs, addrs...)
		if err != nil {
			return err
		}
		b.otlp = r
		b.logf("otlp: receiving spans on %s (OTLP/HTTP at /v1/traces and OTLP/gRPC)", strings.Join(addrs, ", "))
	}
	return nil
}

// closeSpans stops the receiver.
func (b *Session) closeSpans() {
	if b.otlp != nil {
		_ = b.otlp.Close()
		b.otlp = nil
	}
}

// addTrace notes a completed measured request whose span the run's end waits for. It runs
// on the sink goroutine.
func (b *Session) addTrace(r *record.Record) {
	if b.otlp != nil && r.TraceID != "" && r.OK() && r.Measured() {
		b.runTraces = append(b.runTraces, r.TraceID)
	}
}

// writeSpans waits (up to --otlp-wait, not after a hard stop) for the spans of the run's
// completed requests, then writes what the receiver holds as the run's server-spans line,
// just before its run-end line, as telemetry is written.
func (b *Session) writeSpans(hard context.Context, run int) error {
	if b.otlp == nil {
		return nil
	}
	traces := b.runTraces
	b.runTraces = nil
	if hard.Err() == nil && len(traces) > 0 {
		start := time.Now()
		if missing := b.otlp.Await(hard, traces, b.spec.OTLPWait); missing > 0 {
			b.logf("otlp: %d of %d requests' spans had not arrived %v after the run", missing, len(traces), time.Since(start).Round(time.Millisecond))
		}
	}
	s := b.otlp.Take(b.t0)
	s.Run = run
	if err := b.w.WriteSpans(s); err != nil {
		return b.writeErr(err)
	}
	b.hdr.Spans = append(b.hdr.Spans, *s)
	return nil
}

// userHeader reports whether the --header values hs (K=V) set header name.
func userHeader(hs []string, name string) bool {
	for _, h := range hs {
		k, _, _ := strings.Cut(h, "=")
		if strings.EqualFold(strings.TrimSpace(k), name) {
			return true
		}
	}
	return false
}
