package openai

import (
	"context"
	"fmt"
	"testing"
	"time"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

// recorder is an Observer that logs calls in order. It has no mutex on purpose: client.Serial
// promises that calls never overlap, and the race detector checks that promise.
type recorder struct {
	calls []string
	wrote int // WroteRequest calls, kept apart: net/http may report them after Headers
}

func (r *recorder) add(s string)          { r.calls = append(r.calls, s) }
func (r *recorder) Dispatched()           { r.add("dispatch") }
func (r *recorder) ConnectStart()         { r.add("connect") }
func (r *recorder) ConnectDone()          { r.add("connected") }
func (r *recorder) WroteRequest()         { r.wrote++ }
func (r *recorder) Headers(s int)         { r.add(fmt.Sprint("headers ", s)) }
func (r *recorder) EventRead()            { r.add("event") }
func (r *recorder) Choice()               { r.add("choice") }
func (r *recorder) Content(n int)         { r.add(fmt.Sprint("content ", n)) }
func (r *recorder) Usage(p, c int)        { r.add(fmt.Sprintf("usage %d/%d", p, c)) }
func (r *recorder) Done()                 { r.add("done") }
func (r *recorder) Reasoning()            { r.add("reasoning") }
func (r *recorder) ReasoningTokens(n int) { r.add(fmt.Sprint("reasoning_tokens ", n)) }
func (r *recorder) Server(name string, v float64) {
	r.add(fmt.Sprintf("%s=%g", name, v))
}

// events returns the calls grouped per stream event and run-length encoded (clienttest.Group).
func (r *recorder) events() []string { return clienttest.Group(r.calls) }

// server is a loopback httptest server answering every request with a clienttest.Stream.
type server struct{ *clienttest.Server }

func newServer(t *testing.T, s clienttest.Stream) *server {
	return &server{clienttest.NewServer(t, s)}
}

// target returns a Target for srv with its own HTTP client, so connection reuse is per test.
func (srv *server) target() client.Target { return srv.Target() }

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
