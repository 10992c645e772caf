package spans

import (
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // exporters may compress; registers the codec
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"servebench/record"
)

// Limits of a Receiver: what one export may carry and what the receiver holds at once. An
// exporter that sends more is refused (its export counted as rejected), or its spans are
// counted as dropped; the run itself is never touched.
const (
	// MaxBody is the largest export body, after decompression (OTLP's own batches are a
	// few hundred KB; a collector's default gRPC message limit is 4 MiB).
	MaxBody = 16 << 20
	// MaxKept is the most spans of this servebench's traces held between two Take calls.
	MaxKept = 1 << 18
	// maxNames bounds the span names of other traces counted by name.
	maxNames = 16
	// maxNameLen clips span names and attribute keys kept.
	maxNameLen = 128
	// decoders is how many exports are decoded at once: the receiver shares the machine's
	// CPUs with the client that stamps the stream events, so a flood of exports queues
	// rather than taking every core.
	decoders = 2
)

// Receiver is an OTLP trace receiver: one listener that accepts OTLP/HTTP (protobuf and
// JSON, POST /v1/traces) and OTLP/gRPC (over unencrypted HTTP/2) alike. It keeps the spans
// of this servebench's traces (IDs.Ours) and counts the rest by name. It runs on goroutines
// of its own; the load layer never calls it.
type Receiver struct {
	ids  *IDs
	lns  []net.Listener
	srv  *http.Server
	grpc *grpc.Server
	sem  chan struct{}

	mu       sync.Mutex
	spans    []record.Span // since the last Take, times as Unix ns
	served   map[string]bool
	received int
	other    int
	names    map[string]int
	rejected int
	dropped  int
	changed  chan struct{} // closed and replaced whenever spans arrive
}

// Listen starts a receiver for the traces of ids on every address of addrs (host:port),
// each serving every protocol.
func Listen(ids *IDs, addrs ...string) (*Receiver, error) {
	r := &Receiver{ids: ids, sem: make(chan struct{}, decoders), served: map[string]bool{},
		names: map[string]int{}, changed: make(chan struct{})}
	r.grpc = grpc.NewServer(grpc.MaxRecvMsgSize(MaxBody), grpc.MaxConcurrentStreams(16))
	coltracepb.RegisterTraceServiceServer(r.grpc, traceService{r: r})
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true) // gRPC clients speak HTTP/2 with prior knowledge
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serveHTTP), Protocols: &p,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, MaxHeaderBytes: 64 << 10}
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("--otlp-listen %s: %w", a, err)
		}
		r.lns = append(r.lns, ln)
		go func() { _ = r.srv.Serve(ln) }()
	}
	return r, nil
}

// Addr is the address the receiver listens on (the first, when several).
func (r *Receiver) Addr() string { return r.lns[0].Addr().String() }

// Close stops the receiver; exports in progress are cut off.
func (r *Receiver) Close() error {
	r.grpc.Stop()
	for _, ln := range r.lns {
		_ = ln.Close()
	}
	return r.srv.Close()
}

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

// Export is the OTLP/gRPC method.
func (s traceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	if err := s.r.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.r.release()
	s.r.ingest(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (r *Receiver) acquire(ctx context.Context) error {
	select {
	case r.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Receiver) release() { <-r.sem }

// serveHTTP routes gRPC to the gRPC server and serves OTLP/HTTP at /v1/traces.
func (r *Receiver) serveHTTP(w http.ResponseWriter, q *http.Request) {
	if q.ProtoMajor == 2 && strings.HasPrefix(q.Header.Get("Content-Type"), "application/grpc") {
		r.grpc.ServeHTTP(w, q)
		return
	}
	if q.URL.Path != "/v1/traces" {
		http.NotFound(w, q)
		return
	}
	if q.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	ct, _, _ := mime.ParseMediaType(q.Header.Get("Content-Type"))
	if ct != "application/x-protobuf" && ct != "application/json" {
		r.reject()
		http.Error(w, "Content-Type must be application/x-protobuf or application/json", http.StatusUnsupportedMediaType)
		return
	}
	if err := r.acquire(q.Context()); err != nil {
		return
	}
	defer r.release()
	req, status, err := decodeHTTP(w, q, ct == "application/json")
	if err != nil {
		r.reject()
		http.Error(w, err.Error(), status)
		return
	}
	r.ingest(req)
	w.Header().Set("Content-Type", ct)
	if ct == "application/json" {
		_, _ = w.Write([]byte("{}"))
	} // an empty protobuf message is zero bytes
}

// decodeHTTP reads and decodes an OTLP/HTTP body, gzip or plain, within MaxBody.
func decodeHTTP(w http.ResponseWriter, q *http.Request, isJSON bool) (*coltracepb.ExportTraceServiceRequest, int, error) {
	var body io.Reader = http.MaxBytesReader(w, q.Body, MaxBody)
	switch strings.ToLower(q.Header.Get("Content-Encoding")) {
	case "", "identity":
	case "gzip":
		gz, err := gzip.NewReader(body)
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("gzip: %v", err)
		}
		body = gz
	default:
		return nil, http.StatusUnsupportedMediaType, errors.New("Content-Encoding must be gzip or none")
	}
	b, err := io.ReadAll(io.LimitReader(body, MaxBody+1))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", MaxBody)
		}
		return nil, http.StatusBadRequest, err
	}
	if len(b) > MaxBody {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", MaxBody)
	}
	req := &coltracepb.ExportTraceServiceRequest{}
	if isJSON {
		err = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, req)
		if err == nil {
			err = hexIDs(req)
		}
	} else {
		err = proto.Unmarshal(b, req)
	}
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("not an OTLP trace export: %v", err)
	}
	return req, 0, nil
}

// hexIDs undoes protojson's reading of ids: OTLP/JSON writes trace and span ids as hex,
// where the plain protobuf JSON mapping (which protojson implements) reads bytes as base64.
// A hex string is valid base64, so protojson decoded 32 hex digits into 24 bytes: encoding
// them again gives the hex digits back, and those decode to the 16-byte id.
func hexIDs(req *coltracepb.ExportTraceServiceRequest) error {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				var err error
				if sp.TraceId, err = fromHex(sp.TraceId, 16); err != nil {
					return fmt.Errorf("traceId: %v", err)
				}
			}
		}
	}
	return nil
}

func fromHex(b []byte, n int) ([]byte, error) {
	if len(b) == n || len(b) == 0 { // given as base64 after all, or absent
		return b, nil
	}
	if len(b) != n*3/2 {
		return nil, fmt.Errorf("%d bytes", len(b))
	}
	return hex.DecodeString(base64.StdEncoding.EncodeToString(b))
}

func (r *Receiver) reject() {
	r.mu.Lock()
	r.rejected++
	r.mu.Unlock()
}

// ingest keeps the spans of this servebench's traces and counts the others. The spans are
// built before the lock is taken.
func (r *Receiver) ingest(req *coltracepb.ExportTraceServiceRequest) {
	var ours []record.Span
	var other []string
	n := 0
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				n++
				if !r.ids.Ours(sp.GetTraceId()) {
					other = append(other, clip(sp.GetName()))
					continue
				}
				ours = append(ours, record.Span{Trace: hex.EncodeToString(sp.GetTraceId()), Name: clip(sp.GetName()),
					Start: int64(sp.GetStartTimeUnixNano()), End: int64(sp.GetEndTimeUnixNano()), Attrs: numeric(sp.GetAttributes())})
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.received += n
	r.other += len(other)
	for _, name := range other {
		if _, ok := r.names[name]; ok || len(r.names) < maxNames {
			r.names[name]++
		} else {
			r.names["(other names)"]++
		}
	}
	for _, s := range ours {
		if len(r.spans) >= MaxKept {
			r.dropped++
			continue
		}
		r.spans = append(r.spans, s)
		if _, ok := s.Attrs[AttrTTFT]; ok {
			r.served[s.Trace] = true
		}
	}
	if n > 0 {
		close(r.changed)
		r.changed = make(chan struct{})
	}
}

// numeric keeps a span's numeric attributes, at most record.MaxSpanAttrs.
func numeric(kvs []*commonpb.KeyValue) map[string]float64 {
	var m map[string]float64
	for _, kv := range kvs {
		var v float64
		switch x := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_DoubleValue:
			v = x.DoubleValue
		case *commonpb.AnyValue_IntValue:
			v = float64(x.IntValue)
		default:
			continue
		}
		if v != v || v > 1e300 || v < -1e300 { // NaN or infinite: JSON has no such number
			continue
		}
		if m == nil {
			m = map[string]float64{}
		}
		if len(m) == record.MaxSpanAttrs {
			break
		}
		m[clip(kv.GetKey())] = v
	}
	return m
}

// clip makes a name from an exporter safe to keep: valid UTF-8, at most maxNameLen bytes.
func clip(s string) string {
	if len(s) > maxNameLen {
		s = s[:maxNameLen]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return strings.ToValidUTF8(s, "?")
}

// Await waits until every trace in traces has its request span (one carrying
// gen_ai.latency.time_to_first_token), ctx ends, or wait has passed; it returns how many
// are still missing. Servers export in batches (vLLM every 5 s by default), so the last
// requests' spans arrive after the run.
func (r *Receiver) Await(ctx context.Context, traces []string, wait time.Duration) int {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		r.mu.Lock()
		missing := 0
		for _, id := range traces {
			if !r.served[id] {
				missing++
			}
		}
		ch := r.changed
		r.mu.Unlock()
		if missing == 0 {
			return 0
		}
		select {
		case <-ch:
		case <-t.C:
			return missing
		case <-ctx.Done():
			return missing
		}
	}
}

// Take returns what arrived since the last Take as a server-spans line, the span times
// made offsets from t0 (the run's start on the wall clock), and starts afresh.
func (r *Receiver) Take(t0 time.Time) *record.ServerSpans {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := &record.ServerSpans{V: record.SpansVersion, Spans: r.spans, Received: r.received,
		Other: r.other, Rejected: r.rejected, Dropped: r.dropped}
	base := t0.UnixNano()
	for i := range out.Spans {
		out.Spans[i].Start -= base
		out.Spans[i].End -= base
	}
	for name, c := range r.names {
		out.OtherNames = append(out.OtherNames, record.NameCount{Name: name, Count: c})
	}
	sort.Slice(out.OtherNames, func(i, j int) bool {
		a, b := out.OtherNames[i], out.OtherNames[j]
		return a.Count > b.Count || a.Count == b.Count && a.Name < b.Name
	})
	r.spans, r.received, r.other, r.rejected, r.dropped = nil, 0, 0, 0, 0
	r.names = map[string]int{}
	return out
}

// vLLM's attribute names on its llm_request span (vllm/tracing.py, SpanAttributes): times
// in seconds, counts in tokens.
const (
	SpanName       = "llm_request"
	AttrQueue      = "gen_ai.latency.time_in_queue"
	AttrTTFT       = "gen_ai.latency.time_to_first_token"
	AttrE2E        = "gen_ai.latency.e2e"
	AttrPrefill    = "gen_ai.latency.time_in_model_prefill"
	AttrDecode     = "gen_ai.latency.time_in_model_decode"
	AttrInference  = "gen_ai.latency.time_in_model_inference"
	AttrPromptToks = "gen_ai.usage.prompt_tokens"
	AttrOutputToks = "gen_ai.usage.completion_tokens"
)
