package sim

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// The simulator exports one span per finished request, as vLLM does when started with
// --otlp-traces-endpoint: an llm_request SERVER span that continues the trace context the
// request carried (its traceparent header), from the request's arrival to its last token,
// with vLLM's attribute names and the engine's own times as values. A client that joins
// spans to requests is then checked against known time. The OTLP/HTTP protobuf body is
// written by hand here: the simulator shares no wire code with the client side (which
// decodes with the OpenTelemetry module), so a mistake in one cannot hide in the other.

// traceCtx is a request's W3C trace context: its trace id and the caller's span id.
type traceCtx struct {
	trace  [16]byte
	parent [8]byte
}

// parseTraceParent reads a version-00 traceparent header; ok is false for anything else,
// and for the invalid all-zero ids.
func parseTraceParent(h string) (tc traceCtx, ok bool) {
	if len(h) < 55 || h[:3] != "00-" || h[35] != '-' || h[52] != '-' {
		return tc, false
	}
	if _, err := hex.Decode(tc.trace[:], []byte(h[3:35])); err != nil {
		return tc, false
	}
	if _, err := hex.Decode(tc.parent[:], []byte(h[36:52])); err != nil {
		return tc, false
	}
	return tc, tc.trace != [16]byte{} && tc.parent != [8]byte{}
}

// finishedSpan is what the exporter needs of one finished request.
type finishedSpan struct {
	tc                                  traceCtx
	id                                  string
	arrival, end                        time.Time
	queue, ttft, prefill, decode, infer time.Duration
	prompt, output, maxTokens           int
}

// spanExporter batches finished spans and posts them to an OTLP/HTTP endpoint. The engine
// goroutine hands spans over without blocking: when the queue is full the span is dropped
// and counted, as OpenTelemetry's batch processor drops.
type spanExporter struct {
	url     string
	model   string
	in      chan finishedSpan
	done    chan struct{}
	client  *http.Client
	dropped atomic.Int64
	failed  atomic.Int64
}

const (
	spanBatch = 512
	spanDelay = 100 * time.Millisecond
)

func newSpanExporter(endpoint, model string) *spanExporter {
	x := &spanExporter{url: endpoint, model: model, in: make(chan finishedSpan, 8192), done: make(chan struct{}),
		client: &http.Client{Timeout: 10 * time.Second}}
	go x.loop()
	return x
}

// tracesURL is endpoint, with OTLP/HTTP's /v1/traces added when it has no path.
func tracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--otlp-traces-endpoint %q: want http(s)://HOST:PORT[/PATH]", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// add queues a span; it never blocks.
func (x *spanExporter) add(s finishedSpan) {
	select {
	case x.in <- s:
	default:
		x.dropped.Add(1)
	}
}

// close flushes what is queued and stops.
func (x *spanExporter) close() {
	close(x.in)
	<-x.done
	if d, f := x.dropped.Load(), x.failed.Load(); d > 0 || f > 0 {
		fmt.Fprintf(os.Stderr, "sim: otlp: %d spans dropped (queue full), %d exports failed\n", d, f)
	}
}

func (x *spanExporter) loop() {
	defer close(x.done)
	var batch []finishedSpan
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case s, ok := <-x.in:
			if !ok {
				x.post(batch)
				return
			}
			if len(batch) == 0 {
				t.Reset(spanDelay)
			}
			if batch = append(batch, s); len(batch) >= spanBatch {
				t.Stop()
				x.post(batch)
				batch = nil
			}
		case <-t.C:
			x.post(batch)
			batch = nil
		}
	}
}

func (x *spanExporter) post(batch []finishedSpan) {
	if len(batch) == 0 {
		return
	}
	resp, err := x.client.Post(x.url, "application/x-protobuf", bytes.NewReader(x.encode(batch)))
	if err != nil {
		x.failed.Add(1)
		return
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		x.failed.Add(1)
	}
}

// vLLM's span attributes (vllm/tracing.py).
const (
	attrQueue     = "gen_ai.latency.time_in_queue"
	attrTTFT      = "gen_ai.latency.time_to_first_token"
	attrE2E       = "gen_ai.latency.e2e"
	attrPrefill   = "gen_ai.latency.time_in_model_prefill"
	attrDecode    = "gen_ai.latency.time_in_model_decode"
	attrInference = "gen_ai.latency.time_in_model_inference"
)

// encode writes an ExportTraceServiceRequest (opentelemetry-proto collector/trace/v1).
func (x *spanExporter) encode(batch []finishedSpan) []byte {
	var spans []byte
	for _, s := range batch {
		spans = pbBytes(spans, 2, encodeSpan(s, x.model)) // ScopeSpans.spans
	}
	scope := pbBytes(nil, 1, pbString(nil, 1, "servebench-sim")) // ScopeSpans.scope.name
	scope = append(scope, spans...)
	res := pbBytes(nil, 1, pbBytes(nil, 1, kvString("service.name", "servebench-sim"))) // ResourceSpans.resource.attributes
	res = pbBytes(res, 2, scope)                                                        // ResourceSpans.scope_spans
	return pbBytes(nil, 1, res)                                                         // ExportTraceServiceRequest.resource_spans
}

func encodeSpan(s finishedSpan, model string) []byte {
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], rand.Uint64()|1)
	b := pbBytes(nil, 1, s.tc.trace[:])
	b = pbBytes(b, 2, id[:])
	b = pbBytes(b, 4, s.tc.parent[:])
	b = pbString(b, 5, "llm_request")
	b = pbVarint(b, 6, 2) // SPAN_KIND_SERVER
	b = pbFixed64(b, 7, uint64(s.arrival.UnixNano()))
	b = pbFixed64(b, 8, uint64(s.end.UnixNano()))
	for _, kv := range [][]byte{
		kvString("gen_ai.response.model", model), kvString("gen_ai.request.id", s.id),
		kvInt("gen_ai.request.max_tokens", s.maxTokens),
		kvInt("gen_ai.usage.prompt_tokens", s.prompt), kvInt("gen_ai.usage.completion_tokens", s.output),
		kvDouble(attrQueue, s.queue), kvDouble(attrTTFT, s.ttft), kvDouble(attrE2E, s.end.Sub(s.arrival)),
		kvDouble(attrPrefill, s.prefill), kvDouble(attrDecode, s.decode), kvDouble(attrInference, s.infer),
	} {
		b = pbBytes(b, 9, kv)
	}
	return b
}

func kvString(k, v string) []byte { return pbBytes(pbString(nil, 1, k), 2, pbString(nil, 1, v)) }
func kvInt(k string, v int) []byte {
	return pbBytes(pbString(nil, 1, k), 2, pbVarint(nil, 3, uint64(int64(v))))
}
func kvDouble(k string, d time.Duration) []byte {
	return pbBytes(pbString(nil, 1, k), 2, pbFixed64(nil, 4, math.Float64bits(d.Seconds())))
}

// Protocol Buffers wire format: a key is field<<3 | wire type (0 varint, 1 fixed64, 2
// length-delimited).
func pbKey(b []byte, field, wire int) []byte { return binary.AppendUvarint(b, uint64(field<<3|wire)) }
func pbVarint(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(pbKey(b, field, 0), v)
}
func pbFixed64(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(pbKey(b, field, 1), v)
}
func pbBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(pbKey(b, field, 2), uint64(len(v)))
	return append(b, v...)
}
func pbString(b []byte, field int, v string) []byte { return pbBytes(b, field, []byte(v)) }

// finishSpan hands q's span to the exporter, and its times to the truth log, when q
// carried a trace context. It runs on the engine goroutine when q's last token is
// released, with the times vLLM's per-request histograms observe (onRelease).
func (e *engine) finishSpan(q *seq, at time.Time) {
	if e.spans == nil || q.trace == nil {
		return
	}
	sched := q.times.scheduled
	if sched.IsZero() { // fixed mode: no queue, the TTFT is all prefill
		sched = q.arrival
	}
	first := q.times.firstTok
	s := finishedSpan{tc: *q.trace, id: q.id, arrival: q.arrival, end: at, queue: sched.Sub(q.arrival),
		ttft: first.Sub(q.arrival), prefill: first.Sub(sched), decode: at.Sub(first), infer: at.Sub(sched),
		prompt: q.prompt, output: q.generated, maxTokens: q.times.maxTokens}
	e.spans.add(s)
	if e.truth != nil {
		e.truth.writeSpan(s)
	}
}

// writeSpan logs a request's span times (ns) as a "span" line of the truth log.
func (t *truthLog) writeSpan(s finishedSpan) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.err != nil {
		return
	}
	b := append(t.line[:0], `{"request_id":`...)
	b = appendJSONString(b, s.id)
	b = append(b, `,"kind":"span","trace_id":"`...)
	b = hex.AppendEncode(b, s.tc.trace[:])
	b = append(b, '"')
	for _, f := range []struct {
		k string
		v time.Duration
	}{{"queue_ns", s.queue}, {"prefill_ns", s.prefill}, {"decode_ns", s.decode}, {"ttft_ns", s.ttft}} {
		b = append(b, `,"`...)
		b = append(b, f.k...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(f.v), 10)
	}
	b = append(b, "}\n"...)
	t.line = b
	if _, err := t.w.Write(b); err != nil {
		t.err = err
	}
}
