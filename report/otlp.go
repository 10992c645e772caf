package report

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"

	"servebench/record"
)

// The otlp-json format writes a records file as OpenTelemetry traces in the OTLP/JSON
// encoding (the body of an OTLP/HTTP export, ExportTraceServiceRequest), which Jaeger, Tempo
// and an OpenTelemetry Collector load. Each request is one CLIENT span from its due time to
// its end, with its phases as child spans (queue: due → sent; prefill: sent → first content
// event; decode: first content event → end), and the attributes of the OpenTelemetry GenAI
// semantic conventions (gen_ai.*, server.address, error.type). A request of its own is a
// trace of its own; the turns of a multi-turn session share the session's trace, under one
// span for the session.
//
// Times: a record holds monotonic offsets from the run's start t0, and the header holds t0's
// wall-clock time, so a span's time is header start + offset, as Unix nanoseconds. Trace and
// span ids are hashes of the run (its workload hash and seed, its start, its shard) and of the
// request's place in it, so that the same records file always writes the same bytes, and two
// runs never share an id.

// OTLP span kinds and status codes (opentelemetry-proto trace/v1).
const (
	otlpKindInternal = 1
	otlpKindClient   = 3
	otlpStatusError  = 2
)

type otlpExport struct {
	ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
}

type otlpResourceSpans struct {
	Resource   otlpResource     `json:"resource"`
	ScopeSpans []otlpScopeSpans `json:"scopeSpans"`
}

type otlpResource struct {
	Attributes []otlpKV `json:"attributes"`
}

type otlpScopeSpans struct {
	Scope otlpScope  `json:"scope"`
	Spans []otlpSpan `json:"spans"`
}

type otlpScope struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// otlpSpan is one span. OTLP/JSON departs from the plain protobuf JSON mapping in two places
// honoured here: trace and span ids are hex strings (not base64), and 64-bit integers are
// decimal strings.
type otlpSpan struct {
	TraceID      string      `json:"traceId"`
	SpanID       string      `json:"spanId"`
	ParentSpanID string      `json:"parentSpanId,omitempty"`
	Name         string      `json:"name"`
	Kind         int         `json:"kind"`
	Start        string      `json:"startTimeUnixNano"`
	End          string      `json:"endTimeUnixNano"`
	Attributes   []otlpKV    `json:"attributes,omitempty"`
	Status       *otlpStatus `json:"status,omitempty"`
}

type otlpStatus struct {
	Code    int    `json:"code"`
	Message string `json:"message,omitempty"`
}

type otlpKV struct {
	Key   string    `json:"key"`
	Value otlpValue `json:"value"`
}

type otlpValue struct {
	String *string `json:"stringValue,omitempty"`
	Int    *string `json:"intValue,omitempty"` // int64 as a decimal string
	Bool   *bool   `json:"boolValue,omitempty"`
}

func strAttr(k, v string) otlpKV { return otlpKV{k, otlpValue{String: &v}} }
func intAttr(k string, v int64) otlpKV {
	s := strconv.FormatInt(v, 10)
	return otlpKV{k, otlpValue{Int: &s}}
}
func boolAttr(k string, v bool) otlpKV { return otlpKV{k, otlpValue{Bool: &v}} }

// otlpRun holds what every span of one records file shares.
type otlpRun struct {
	h         *record.Header
	wall      int64 // t0 as Unix ns
	seed      []byte
	model     string
	system    string // gen_ai.system
	operation string // gen_ai.operation.name
	server    []otlpKV
}

func newOTLPRun(h *record.Header) (*otlpRun, error) {
	if h == nil || h.Start.IsZero() {
		return nil, errors.New("otlp-json: the records file's header has no wall-clock start: spans need one")
	}
	o := &otlpRun{h: h, wall: h.Start.UnixNano(), model: h.Target.Model}
	o.seed = fmt.Appendf(nil, "%s|%d|%s|%s|%s", h.Workload.Hash, h.Workload.Seed, h.Workload.Nonce,
		h.Start.UTC().Format("2006-01-02T15:04:05.999999999Z"), h.Shard)
	o.system, o.operation = genAISystem(h.Target.API)
	if u, err := url.Parse(h.Target.URL); err == nil && u.Host != "" {
		host, port, err := net.SplitHostPort(u.Host)
		if err != nil {
			host, port = u.Host, map[string]string{"https": "443"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		o.server = append(o.server, strAttr("server.address", host))
		if p, err := strconv.Atoi(port); err == nil {
			o.server = append(o.server, intAttr("server.port", int64(p)))
		}
	}
	return o, nil
}

// genAISystem returns the gen_ai.system and gen_ai.operation.name of an API: the provider's
// well-known name where the semantic conventions have one (openai, anthropic), else the API's
// own name; "chat" for the chat-shaped APIs, "embeddings" for embeddings, else
// "text_completion".
func genAISystem(api string) (system, operation string) {
	switch {
	case strings.HasPrefix(api, "openai"), api == "sglang":
		system = "openai"
	case strings.HasPrefix(api, "anthropic"):
		system = "anthropic"
	case strings.HasPrefix(api, "ollama"):
		system = "ollama"
	case api == "":
		system = "_OTHER"
	default:
		system = api
	}
	switch {
	case strings.Contains(api, "embed"):
		operation = "embeddings"
	case strings.Contains(api, "chat"), strings.Contains(api, "responses"), strings.Contains(api, "messages"):
		operation = "chat"
	default:
		operation = "text_completion"
	}
	return system, operation
}

// id returns n bytes of the hash of the run and parts, as hex.
func (o *otlpRun) id(n int, parts ...int64) string {
	h := sha256.New()
	h.Write(o.seed)
	var b [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(b[:], uint64(p))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:n])
}

func (o *otlpRun) unixNano(t int64) string { return strconv.FormatInt(o.wall+t, 10) }

// Parts of an id's hash, so that a trace, a request and each phase never share one.
const (
	idTrace = iota + 1
	idSession
	idRequest
	idPhase
)

// traceOf returns the trace id and the parent span id (empty: none) of r: its session's, or
// its own trace. seq is r's position in the file, unique where a request id repeats (warmup
// and measured requests, repeats).
func (o *otlpRun) traceOf(r *record.Record, seq int64) (trace, parent string) {
	if r.Session > 0 {
		return o.id(16, idTrace, int64(r.Run), int64(r.Session), -1), o.id(8, idSession, int64(r.Run), int64(r.Session))
	}
	return o.id(16, idTrace, int64(r.Run), seq, int64(r.ID)), ""
}

// requestSpans returns r's span and its phases' spans.
func (o *otlpRun) requestSpans(r *record.Record, seq int64) []otlpSpan {
	q, ok := laneOf(r)
	if !ok {
		return nil
	}
	trace, parent := o.traceOf(r, seq)
	self := o.id(8, idRequest, int64(r.Run), seq)
	model := o.model
	if r.Adapter != "" {
		model = r.Adapter
	}
	attrs := []otlpKV{strAttr("gen_ai.system", o.system), strAttr("gen_ai.operation.name", o.operation),
		strAttr("gen_ai.request.model", model)}
	if r.MaxTokens > 0 {
		attrs = append(attrs, intAttr("gen_ai.request.max_tokens", int64(r.MaxTokens)))
	}
	if r.PromptTokens > 0 {
		attrs = append(attrs, intAttr("gen_ai.usage.input_tokens", int64(r.PromptTokens)))
	}
	if r.OK() || r.OutputTokens > 0 {
		attrs = append(attrs, intAttr("gen_ai.usage.output_tokens", int64(r.OutputTokens)))
	}
	attrs = append(attrs, o.server...)
	if r.Session > 0 {
		attrs = append(attrs, strAttr("gen_ai.conversation.id", strconv.Itoa(r.Session)), intAttr("servebench.turn", int64(r.Turn)))
	}
	if r.Status > 0 {
		attrs = append(attrs, intAttr("http.response.status_code", int64(r.Status)))
	}
	attrs = append(attrs, intAttr("servebench.request.id", int64(r.ID)), intAttr("servebench.run", int64(r.Run)),
		strAttr("servebench.phase", r.Phase))
	span := otlpSpan{TraceID: trace, SpanID: self, ParentSpanID: parent, Name: o.operation + " " + model,
		Kind: otlpKindClient, Start: o.unixNano(q.due), End: o.unixNano(q.end)}
	if !r.OK() {
		attrs = append(attrs, strAttr("error.type", r.ErrorClass))
		span.Status = &otlpStatus{Code: otlpStatusError, Message: r.Error}
	}
	span.Attributes = attrs
	out := []otlpSpan{span}
	segs := q.segs()
	for k, s := range segs {
		ph := otlpSpan{TraceID: trace, SpanID: o.id(8, idPhase, int64(r.Run), seq, int64(k)), ParentSpanID: self,
			Name: segName[s.kind], Kind: otlpKindInternal, Start: o.unixNano(s.a), End: o.unixNano(s.b)}
		if !r.OK() && k == len(segs)-1 {
			ph.Status = &otlpStatus{Code: otlpStatusError} // the phase the request failed in
		}
		out = append(out, ph)
	}
	return out
}

// otlpSession is a session's span: from its first turn's due time to its last turn's end.
type otlpSession struct {
	run, session int
	from, to     int64
}

// renderOTLP is the otlp-json format.
func renderOTLP(w io.Writer, ins []Input) error {
	in := ins[0]
	recs, err := in.records("otlp-json")
	if err != nil {
		return err
	}
	o, err := newOTLPRun(in.Header)
	if err != nil {
		return fmt.Errorf("%s: %w", in.label(), err)
	}
	spans := []otlpSpan{}
	var sessions []otlpSession
	index := map[[2]int]int{}
	var seq int64
	for r, err := range recs {
		if err != nil {
			return err
		}
		spans = append(spans, o.requestSpans(r, seq)...)
		seq++
		if q, ok := laneOf(r); ok && r.Session > 0 {
			k := [2]int{r.Run, r.Session}
			i, seen := index[k]
			if !seen {
				i = len(sessions)
				index[k] = i
				sessions = append(sessions, otlpSession{r.Run, r.Session, q.due, q.end})
			}
			sessions[i].from, sessions[i].to = min(sessions[i].from, q.due), max(sessions[i].to, q.end)
		}
	}
	for _, s := range sessions {
		spans = append(spans, otlpSpan{TraceID: o.id(16, idTrace, int64(s.run), int64(s.session), -1),
			SpanID: o.id(8, idSession, int64(s.run), int64(s.session)), Name: fmt.Sprintf("session %d", s.session),
			Kind: otlpKindInternal, Start: o.unixNano(s.from), End: o.unixNano(s.to),
			Attributes: []otlpKV{strAttr("gen_ai.conversation.id", strconv.Itoa(s.session)), intAttr("servebench.run", int64(s.run))}})
	}
	h := o.h
	res := []otlpKV{strAttr("service.name", "servebench"), strAttr("service.version", h.Version),
		boolAttr("servebench.simulated", h.Target.Simulated), strAttr("servebench.target.url", h.Target.URL),
		strAttr("servebench.workload.hash", h.Workload.Hash), intAttr("servebench.workload.seed", h.Workload.Seed)}
	if h.Shard != "" {
		res = append(res, strAttr("servebench.shard", h.Shard))
	}
	doc := otlpExport{ResourceSpans: []otlpResourceSpans{{Resource: otlpResource{Attributes: res},
		ScopeSpans: []otlpScopeSpans{{Scope: otlpScope{Name: "servebench", Version: h.Version}, Spans: spans}}}}}
	enc := json.NewEncoder(w)
	return enc.Encode(doc)
}
