package record

import (
	"encoding/json"
	"fmt"
)

// SpansVersion is the version of the server-spans line written by this package; a reader
// skips lines of a newer version, as it skips newer telemetry.
const SpansVersion = 1

// ServerSpans are the OpenTelemetry spans a server exported for a run's requests (run
// --otlp-listen): raw observations like a Record, joined to records by trace id
// (Record.TraceID) when a summary is made, so a span that arrived after its run's line is
// still joined. Like telemetry, the line is written just before a run's RunEnd line, never
// as spans arrive: the records writer belongs to the sink.
type ServerSpans struct {
	V   int `json:"v"`             // SpansVersion
	Run int `json:"run,omitempty"` // the run whose end wrote the line
	// Spans are the spans of the run's traces received since the previous line.
	Spans []Span `json:"spans,omitempty"`
	// Received counts every span received since the previous line, joined or not.
	Received int `json:"received"`
	// Other counts spans whose trace id is none of this servebench's (another client's
	// traffic, a misconfigured or hostile exporter), and OtherNames names them by span name
	// (the most frequent first, at most 16; the rest under "(other names)").
	Other      int         `json:"other,omitempty"`
	OtherNames []NameCount `json:"other_names,omitempty"`
	// Rejected counts exports refused whole: a body that is not OTLP, or over the size limit.
	Rejected int `json:"rejected,omitempty"`
	// Dropped counts spans of this servebench's traces not kept because the receiver held
	// its limit of spans already.
	Dropped int `json:"dropped,omitempty"`
}

// Span is one span of a request's trace, as the server reported it.
type Span struct {
	Trace string `json:"trace"` // trace id, 32 hex digits
	Name  string `json:"name"`
	// Start and End are the span's times in ns since t0, from the server's wall clock
	// (Unix ns minus the header's start): they agree with the records' times only as well
	// as the two machines' clocks agree.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Attrs are the span's numeric attributes (vLLM's gen_ai.latency.* in seconds,
	// gen_ai.usage.* token counts), at most MaxSpanAttrs of them.
	Attrs map[string]float64 `json:"attrs,omitempty"`
}

// MaxSpanAttrs bounds the attributes a Span keeps.
const MaxSpanAttrs = 32

// NameCount is a name and how many times it was met.
type NameCount struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

type spansLine struct {
	S *ServerSpans `json:"servebench_spans"`
}

const spansPrefix = `{"servebench_spans":`

// WriteSpans writes one server-spans line.
func (w *Writer) WriteSpans(s *ServerSpans) error {
	if s.V == 0 {
		s.V = SpansVersion
	}
	return w.encode(spansLine{s})
}

// readSpans decodes a server-spans line into the header's list; a newer version is skipped.
func (r *Reader) readSpans(b []byte) error {
	var sl spansLine
	if err := json.Unmarshal(b, &sl); err != nil || sl.S == nil {
		return &LineError{Line: r.line, Err: fmt.Errorf("spans: %v", errOr(err))}
	}
	if sl.S.V <= SpansVersion {
		r.hdr.Spans = append(r.hdr.Spans, *sl.S)
	}
	return nil
}
