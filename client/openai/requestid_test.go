package openai

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"servebench/client"
	"servebench/workload"
)

// TestRequestIDHeader checks that Request.RequestID travels as X-Request-Id and
// Request.TraceParent as traceparent.
func TestRequestIDHeader(t *testing.T) {
	got, tp := make(chan string, 1), make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("X-Request-Id")
		tp <- r.Header.Get("traceparent")
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: [DONE]\n\n"))
	}))
	defer srv.Close()
	b, err := New(client.Target{BaseURL: srv.URL}, APICompletions)
	if err != nil {
		t.Fatal(err)
	}
	req := &client.Request{Request: &workload.Request{Prompt: "hi", OutputTokens: 2}, RequestID: "0-7",
		TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	if err := b.Do(context.Background(), req, nopObserver{}); err != nil {
		t.Fatal(err)
	}
	if id := <-got; id != "0-7" {
		t.Errorf("X-Request-Id %q, want 0-7", id)
	}
	if v := <-tp; v != req.TraceParent {
		t.Errorf("traceparent %q, want %q", v, req.TraceParent)
	}
}
