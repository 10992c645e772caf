package client

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// TestPrewarm checks that Prewarm leaves n connections idle, so n concurrent requests after
// it all reuse one and none is dialled.
func TestPrewarm(t *testing.T) {
	var conns atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-release // keep every request in flight at once
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	const n = 16
	tgt := Target{BaseURL: srv.URL, HTTP: NewHTTPClient(n, false)}
	if got := Prewarm(context.Background(), tgt, n); got != n {
		t.Fatalf("Prewarm opened %d connections, want %d", got, n)
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, _ := tgt.NewRequest(context.Background(), http.MethodGet, "/hold", nil)
			resp, err := tgt.Client().Do(req)
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	close(release)
	wg.Wait()
	if c := conns.Load(); c != n {
		t.Errorf("%d connections made in all, want %d: the requests after Prewarm dialled", c, n)
	}
}

func TestSetRequestID(t *testing.T) {
	h := http.Header{}
	SetRequestID(h, "3-14")
	if h.Get("X-Request-Id") != "3-14" {
		t.Errorf("X-Request-Id %q", h.Get("X-Request-Id"))
	}
	h.Set("X-Request-Id", "mine")
	SetRequestID(h, "3-15")
	if h.Get("X-Request-Id") != "mine" {
		t.Errorf("the user's X-Request-Id was overwritten: %q", h.Get("X-Request-Id"))
	}
}

func TestBufferSize(t *testing.T) {
	for _, c := range []struct{ conns, want int }{{1, 64 << 10}, {1024, 64 << 10}, {2048, 32 << 10}, {1 << 20, 16 << 10}} {
		if got := bufferSize(c.conns); got != c.want {
			t.Errorf("bufferSize(%d) = %d, want %d", c.conns, got, c.want)
		}
	}
}
