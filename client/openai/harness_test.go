package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"servebench/client"
	"servebench/workload"
)

// recorder is an Observer that logs calls in order. It has no mutex on purpose: client.Serial
// promises that calls never overlap, and the race detector checks that promise.
type recorder struct {
	calls []string
	wrote int // WroteRequest calls, kept apart: net/http may report them after Headers
}

func (r *recorder) add(s string)   { r.calls = append(r.calls, s) }
func (r *recorder) Dispatched()    { r.add("dispatch") }
func (r *recorder) ConnectStart()  { r.add("connect") }
func (r *recorder) ConnectDone()   { r.add("connected") }
func (r *recorder) WroteRequest()  { r.wrote++ }
func (r *recorder) Headers(s int)  { r.add(fmt.Sprint("headers ", s)) }
func (r *recorder) EventRead()     { r.add("event") }
func (r *recorder) Choice()        { r.add("choice") }
func (r *recorder) Content(n int)  { r.add(fmt.Sprint("content ", n)) }
func (r *recorder) Usage(p, c int) { r.add(fmt.Sprintf("usage %d/%d", p, c)) }
func (r *recorder) Done()          { r.add("done") }
func (r *recorder) Server(name string, v float64) {
	r.add(fmt.Sprintf("%s=%g", name, v))
}

// events returns the calls grouped per stream event ("event" starts a group; calls before the
// first event are their own lines) and run-length encoded, so that a 30-event stream reads
// as a few lines: "event choice content 0 ×29".
func (r *recorder) events() []string {
	var lines []string
	for _, c := range r.calls {
		if c == "event" || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "event") {
			lines = append(lines, c)
			continue
		}
		lines[len(lines)-1] += " " + c
	}
	var out []string
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && lines[j] == lines[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, fmt.Sprintf("%s ×%d", lines[i], j-i))
		} else {
			out = append(out, lines[i])
		}
		i = j
	}
	return out
}

// stream describes how a fake server answers.
type stream struct {
	body   string // SSE body
	chunk  int    // bytes per write, each flushed; 0 = all at once
	status int    // 0 = 200
	ctype  string // "" = text/event-stream
	stall  bool   // after writing body, hang until the client goes away
}

// server is an httptest server on 127.0.0.1 that answers every request with s and records
// the last request's headers and JSON body.
type server struct {
	*httptest.Server
	header chan http.Header
	body   chan map[string]any
	path   chan string
}

func newServer(t *testing.T, s stream) *server {
	t.Helper()
	srv := &server{header: make(chan http.Header, 16), body: make(chan map[string]any, 16), path: make(chan string, 16)}
	srv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		srv.header <- r.Header.Clone()
		srv.body <- m
		srv.path <- r.Method + " " + r.URL.Path
		serve(w, r, s)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// serve writes s to w.
func serve(w http.ResponseWriter, r *http.Request, s stream) {
	ct := s.ctype
	if ct == "" {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	if s.status != 0 {
		w.WriteHeader(s.status)
	}
	f := w.(http.Flusher)
	f.Flush()
	n := s.chunk
	if n <= 0 {
		n = len(s.body) + 1
	}
	for b := s.body; b != ""; {
		k := min(n, len(b))
		if _, err := io.WriteString(w, b[:k]); err != nil {
			return
		}
		f.Flush()
		b = b[k:]
	}
	if s.stall {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// target returns a Target for srv with its own HTTP client, so connection reuse is per test.
func (srv *server) target() client.Target {
	return client.Target{BaseURL: srv.URL, HTTP: client.NewHTTPClient(4, false)}
}

func transcript(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// request is a small workload request for both APIs.
func request() *client.Request {
	return &client.Request{
		Request: &workload.Request{ID: 3, Prompt: "Hello", OutputTokens: 16,
			Messages: []workload.Message{{Role: "user", Content: "Hello"}}},
		Model: "tiny",
	}
}

// run sends one request to srv through a new backend and returns the recorder and error.
func run(t *testing.T, t0 client.Target, api string, idle time.Duration) (*recorder, error) {
	t.Helper()
	b, err := New(t0, api)
	if err != nil {
		t.Fatal(err)
	}
	b.IdleTimeout = idle
	rec := &recorder{}
	return rec, b.Do(context.Background(), request(), rec)
}

// class returns the error class of err, "" for nil, and fails on non-*client.Error errors.
func class(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var ce *client.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *client.Error", err, err)
	}
	return ce.Class
}
