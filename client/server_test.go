package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fake starts a server on 127.0.0.1 with handler h and returns a Target for it.
func fake(t *testing.T, h http.HandlerFunc) Target {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return Target{BaseURL: srv.URL + "/v1/", APIKey: "sk-x", HTTP: NewHTTPClient(2, false)}
}

func TestListModels(t *testing.T) {
	tg := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer sk-x" {
			http.Error(w, "wrong request "+r.URL.Path, 400)
			return
		}
		io.WriteString(w, `{"object":"list","models":[{"name":"ignored"}],"data":[{"id":"a"},{"id":"b"}]}`)
	})
	got, err := ListModels(context.Background(), tg)
	if err != nil || strings.Join(got, ",") != "a,b" {
		t.Fatalf("ListModels = %q, %v", got, err)
	}
}

func TestListModelsError(t *testing.T) {
	tg := fake(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"message":"bad key sk-x"}}`)
	})
	_, err := ListModels(context.Background(), tg)
	if err == nil || err.Error() != "list models: http_4xx (HTTP 401): bad key [REDACTED]" {
		t.Fatalf("err = %v", err)
	}
}

func TestTokenize(t *testing.T) {
	cases := []struct {
		name   string
		status int
		answer string
		want   int
		err    error
	}{
		{"vllm", 200, `{"count":3,"max_model_len":4096,"tokens":[1,2,3]}`, 3, nil},
		{"llama.cpp", 200, `{"tokens":[577,444]}`, 2, nil},
		{"pieces", 200, `{"tokens":[{"id":1,"piece":"a"}]}`, 1, nil},
		{"empty", 200, `{"tokens":[]}`, 0, nil},
		{"tgi", 200, `[{"id":1,"text":"hi","start":0,"stop":2},{"id":2,"text":" there","start":2,"stop":8}]`, 2, nil},
		{"absent", 404, `Not Found`, 0, ErrNoTokenizer},
		{"method", 405, ``, 0, ErrNoTokenizer},
		{"not implemented", 501, `{"error":{"message":"no tokenizer"}}`, 0, ErrNoTokenizer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body string
			tg := fake(t, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				body = r.Method + " " + r.URL.Path + " " + string(b)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.answer)
			})
			n, err := Tokenize(context.Background(), tg, "m", "hi there")
			if n != tc.want || err != tc.err {
				t.Fatalf("Tokenize = %d, %v; want %d, %v", n, err, tc.want, tc.err)
			}
			const want = `POST /tokenize {"add_special":false,"add_special_tokens":false,"content":"hi there","inputs":"hi there","model":"m","prompt":"hi there"}`
			if body != want {
				t.Errorf("request %s\nwant    %s", body, want)
			}
		})
	}
}

func TestTokenizeErrors(t *testing.T) {
	for answer, want := range map[string]string{
		`{"nothing":1}`: "tokenize: answer has neither count nor tokens",
		`{"count":`:     "tokenize: POST /tokenize: decode answer: unexpected EOF",
	} {
		tg := fake(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, answer) })
		if _, err := Tokenize(context.Background(), tg, "m", "x"); err == nil || err.Error() != want {
			t.Errorf("answer %s: err = %v, want %s", answer, err, want)
		}
	}
}

func TestWaitReadyRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	l.Close()
	// A refused connection is "not yet", so WaitReady must keep polling until its own
	// deadline. Only the lower bound is asserted on the clock, and it cannot flake: the
	// deadline is set after began, so no scheduling delay can make WaitReady return before
	// 600 ms have passed, only after. An upper bound on the wall clock (there was one, 3 s)
	// measures the machine's load as much as the code; a WaitReady that ignored its timeout
	// is caught by the watchdog instead, whose minute is a hundred times the timeout.
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- WaitReady(context.Background(), Target{BaseURL: base}, 600*time.Millisecond) }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("WaitReady ignored its 600ms timeout")
	}
	if d := time.Since(began); d < 600*time.Millisecond {
		t.Errorf("returned after %v, before its 600ms timeout", d)
	}
	want := "server at " + base + " not ready after 600ms: dial tcp " + l.Addr().String() + ": connect: connection refused"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
	var nr *NotReadyError
	if !errors.As(err, &nr) || !nr.Refused || nr.Timeout != 600*time.Millisecond {
		t.Errorf("err = %#v, want a NotReadyError of a refused connection after 600ms", err)
	}
}

// TestWaitReadyNotServed: an HTTP server that answers 404 on every readiness path is not a
// server still starting; the wait ends at its first probe with the base-URL hint, not after
// its timeout. A timeout would be a NotReadyError, so the error's type shows which ended it.
func TestWaitReadyNotServed(t *testing.T) {
	var paths sync.Map
	tg := fake(t, func(w http.ResponseWriter, r *http.Request) {
		paths.Store(r.URL.Path, true)
		http.NotFound(w, r)
	})
	err := WaitReady(context.Background(), tg, time.Minute)
	var ns *NotServedError
	if !errors.As(err, &ns) || ns.Base != tg.Base() {
		t.Fatalf("err = %v, want a NotServedError", err)
	}
	if !strings.Contains(err.Error(), "give the server's base URL") {
		t.Errorf("err = %v: no base-URL hint", err)
	}
	for _, p := range []string{"/health", "/v1/models", "/v2/health/ready"} {
		if _, ok := paths.Load(p); !ok {
			t.Errorf("%s not probed", p)
		}
	}
}

// TestWaitReadyLoading: llama.cpp answers 503 on /health while loading, then 200.
func TestWaitReadyLoading(t *testing.T) {
	t.Parallel() // its own server, waiting on the wall clock: the waits overlap
	var calls atomic.Int32
	tg := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			t.Errorf("unexpected %s", r.URL.Path)
		}
		if calls.Add(1) < 3 {
			http.Error(w, `{"error":{"message":"Loading model"}}`, http.StatusServiceUnavailable)
		}
	})
	if err := WaitReady(context.Background(), tg, 5*time.Second); err != nil || calls.Load() != 3 {
		t.Fatalf("err = %v after %d probes", err, calls.Load())
	}
}

// TestWaitReadyNoHealth: Ollama has no /health; /v1/models decides.
func TestWaitReadyNoHealth(t *testing.T) {
	tg := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
		}
	})
	if err := WaitReady(context.Background(), tg, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestWaitReadyTimeoutStatus(t *testing.T) {
	t.Parallel() // its own server, waiting on the wall clock: the waits overlap
	tg := fake(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	err := WaitReady(context.Background(), tg, 1500*time.Millisecond)
	want := "server at " + tg.Base() + " not ready after 1.5s: GET /health: HTTP 503"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
}

func TestWaitReadyCancelled(t *testing.T) {
	t.Parallel() // its own server, waiting on the wall clock: the waits overlap
	tg := fake(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := WaitReady(ctx, tg, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "wait for server at") {
		t.Fatalf("err = %v", err)
	}
}

func TestTarget(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8000":      "http://h:8000",
		"http://h:8000/":     "http://h:8000",
		"http://h:8000/v1":   "http://h:8000",
		"http://h:8000/v1/":  "http://h:8000",
		"http://h/proxy/v1/": "http://h/proxy",
	} {
		if got := (Target{BaseURL: in}).Base(); got != want {
			t.Errorf("Base(%q) = %q, want %q", in, got, want)
		}
	}
	tg := Target{BaseURL: "http://h", APIKey: "k", Header: http.Header{"X-A": {"1", "2"}}}
	req, err := tg.NewRequest(context.Background(), "POST", "/v1/x", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "http://h/v1/x" || req.Header.Get("Authorization") != "Bearer k" ||
		len(req.Header["X-A"]) != 2 || req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request %s %v", req.URL, req.Header)
	}
	if tg.Client() == nil || (Target{}).Redact("k") != "k" {
		t.Error("defaults")
	}
}

func TestNewHTTPClient(t *testing.T) {
	c := NewHTTPClient(256, true)
	tr := c.Transport.(*http.Transport)
	if c.Timeout != 0 || tr.MaxIdleConnsPerHost < 256 || tr.MaxConnsPerHost != 0 || !tr.DisableCompression ||
		!tr.ForceAttemptHTTP2 || tr.ReadBufferSize < 64<<10 || !tr.TLSClientConfig.InsecureSkipVerify {
		t.Errorf("transport %+v", tr)
	}
	if NewHTTPClient(1, false).Transport.(*http.Transport).TLSClientConfig.InsecureSkipVerify {
		t.Error("TLS verification must be on by default")
	}
}
