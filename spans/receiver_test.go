package spans

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"servebench/record"
)

func export(trace []byte, name string, ttft float64) *coltracepb.ExportTraceServiceRequest {
	sp := &tracepb.Span{TraceId: trace, SpanId: []byte{1, 2, 3, 4, 5, 6, 7, 8}, Name: name,
		StartTimeUnixNano: 2_000_000_000, EndTimeUnixNano: 3_000_000_000,
		Attributes: []*commonpb.KeyValue{
			{Key: AttrTTFT, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: ttft}}},
			{Key: AttrPromptToks, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 7}}},
			{Key: "gen_ai.response.model", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "m"}}},
		}}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{sp}}}}}}
}

func post(t *testing.T, url, ct string, body []byte) int {
	t.Helper()
	resp, err := http.Post(url, ct, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestReceiver sends one span of each encoding, a span of another trace, garbage and an
// oversized body, and checks what was kept, counted and refused.
func TestReceiver(t *testing.T) {
	ids := NewIDs()
	r, err := Listen(ids, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	url := "http://" + r.Addr() + "/v1/traces"
	var traces []string
	idOf := func() []byte {
		_, id := ids.Next()
		traces = append(traces, id)
		b, _ := hex.DecodeString(id)
		return b
	}
	// protobuf over HTTP
	b, _ := proto.Marshal(export(idOf(), SpanName, 0.5))
	if c := post(t, url, "application/x-protobuf", b); c != 200 {
		t.Errorf("protobuf export: status %d", c)
	}
	// OTLP/JSON: hex ids, 64-bit integers as strings
	js := fmt.Sprintf(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":%q,"spanId":"0102030405060708","name":"llm_request",
		"startTimeUnixNano":"2000000000","endTimeUnixNano":"3000000000",
		"attributes":[{"key":%q,"value":{"doubleValue":0.25}}]}]}]}]}`, hex.EncodeToString(idOf()), AttrTTFT)
	if c := post(t, url, "application/json", []byte(js)); c != 200 {
		t.Errorf("JSON export: status %d", c)
	}
	// gRPC on the same port
	conn, err := grpc.NewClient(r.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := coltracepb.NewTraceServiceClient(conn).Export(ctx, export(idOf(), SpanName, 0.125)); err != nil {
		t.Errorf("gRPC export: %v", err)
	}
	// hostile: a random trace id, garbage, a huge body, the wrong content type
	other := make([]byte, 16)
	other[0] = 9
	b, _ = proto.Marshal(export(other, "router", 1))
	post(t, url, "application/x-protobuf", b)
	for _, c := range []struct {
		ct   string
		body []byte
		want int
	}{
		{"application/x-protobuf", []byte("\xff\xff\xff garbage"), 400},
		{"application/json", []byte(`{"resourceSpans": 7}`), 400},
		{"application/x-protobuf", make([]byte, MaxBody+10), 413},
		{"text/plain", []byte("hi"), 415},
	} {
		if got := post(t, url, c.ct, c.body); got != c.want {
			t.Errorf("%s body of %d bytes: status %d, want %d", c.ct, len(c.body), got, c.want)
		}
	}
	if missing := r.Await(ctx, traces, 5*time.Second); missing != 0 {
		t.Fatalf("%d of 3 traces missing", missing)
	}
	got := r.Take(time.Unix(1, 0))
	if len(got.Spans) != 3 || got.Received != 4 || got.Other != 1 || got.Rejected != 4 {
		t.Fatalf("kept %d spans, received %d, other %d, rejected %d; want 3, 4, 1, 4", len(got.Spans), got.Received, got.Other, got.Rejected)
	}
	want := map[string]float64{traces[0]: 0.5, traces[1]: 0.25, traces[2]: 0.125}
	for _, s := range got.Spans {
		if s.Attrs[AttrTTFT] != want[s.Trace] || s.Start != 1e9 || s.End != 2e9 {
			t.Errorf("span %+v: want ttft %v, start 1e9, end 2e9", s, want[s.Trace])
		}
	}
	if len(got.OtherNames) != 1 || got.OtherNames[0] != (record.NameCount{Name: "router", Count: 1}) {
		t.Errorf("other names %+v", got.OtherNames)
	}
	if again := r.Take(time.Unix(1, 0)); len(again.Spans) != 0 || again.Received != 0 {
		t.Errorf("a second Take returned %+v", again)
	}
}
