package sglang

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"servebench/client"
)

// TestFlushCache: POST /flush_cache; a refusal (SGLang answers 400 while requests are in
// flight) or a server without the endpoint is an error that says so.
func TestFlushCache(t *testing.T) {
	var calls []string
	busy := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, r.Method+" "+r.URL.Path)
		switch {
		case r.URL.Path != "/flush_cache":
			http.NotFound(w, r)
		case busy:
			http.Error(w, "Cache not flushed. Please check the server logs.", http.StatusBadRequest)
		default:
			_, _ = w.Write([]byte("Cache flushed.\n"))
		}
	}))
	defer srv.Close()
	tg := client.Target{BaseURL: srv.URL}
	if err := FlushCache(context.Background(), tg); err != nil {
		t.Fatal(err)
	}
	busy = true
	if err := FlushCache(context.Background(), tg); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("busy server: %v", err)
	}
	if len(calls) != 2 || calls[0] != "POST /flush_cache" {
		t.Errorf("calls %v", calls)
	}
}
