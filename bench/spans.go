package bench

import (
	"context"
	"strings"

	"servebench/spans"
)

// openSpans gives the requests their trace context unless the run sends none: with
// --no-trace-context, or when the user's own --header traceparent stands for every request
// (one trace id for all requests joins nothing to any one of them).
func (b *Session) openSpans(context.Context) error {
	if b.spec.NoTraceContext || userHeader(b.spec.Headers, spans.TraceParentHeader) {
		return nil
	}
	b.traceIDs = spans.NewIDs()
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
