// Package clienttest holds the test helpers every backend package shares: an Observer that
// logs its calls, and a loopback server that replays a transcript in chunks of any size.
package clienttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"servebench/client"
)

// Recorder is an Observer that logs calls in order. It has no mutex on purpose:
// client.Serial promises that calls never overlap, and the race detector checks it.
type Recorder struct {
	Calls   []string
	Figures map[string]float64 // server figures by name
}

func (r *Recorder) add(s string) { r.Calls = append(r.Calls, s) }

// Dispatched implements client.Observer.
func (r *Recorder) Dispatched() { r.add("dispatch") }

// ConnectStart implements client.Observer (not logged: it depends on connection reuse).
func (r *Recorder) ConnectStart() {}

// ConnectDone implements client.Observer (not logged).
func (r *Recorder) ConnectDone() {}

// WroteRequest implements client.Observer (not logged: net/http may report it late).
func (r *Recorder) WroteRequest() {}

// Headers implements client.Observer.
func (r *Recorder) Headers(s int) { r.add(fmt.Sprint("headers ", s)) }

// EventRead implements client.Observer.
func (r *Recorder) EventRead() { r.add("event") }

// Choice implements client.Observer.
func (r *Recorder) Choice() { r.add("choice") }

// Content implements client.Observer.
func (r *Recorder) Content(n int) { r.add(fmt.Sprint("content ", n)) }

// Usage implements client.Observer.
func (r *Recorder) Usage(p, c int) { r.add(fmt.Sprintf("usage %d/%d", p, c)) }

// Done implements client.Observer.
func (r *Recorder) Done() { r.add("done") }

// Server implements client.Observer; figures are kept in Figures, not in Calls.
func (r *Recorder) Server(name string, v float64) {
	if r.Figures == nil {
		r.Figures = map[string]float64{}
	}
	r.Figures[name] = v
}

// Events returns the calls grouped per stream event and run-length encoded (see Group).
func (r *Recorder) Events() []string { return Group(r.Calls) }

// Group returns observer calls grouped per stream event ("event" starts a group; calls
// before the first event are their own lines) and run-length encoded, so that a 30-event
// stream reads as a few lines: "event choice content 1 ×29".
func Group(calls []string) []string {
	var lines []string
	for _, c := range calls {
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

// Stream describes how a Server answers.
type Stream struct {
	Body   string // response body
	Chunk  int    // bytes per write, each flushed; 0 = all at once
	Status int    // 0 = 200
	CType  string // "" = text/event-stream
	Stall  bool   // after the body, hang until the client goes away
}

// Server is a loopback httptest server answering every request with a Stream; it keeps
// the last request's path, headers and JSON body.
type Server struct {
	*httptest.Server
	Req chan Seen
}

// Seen is one request a Server received.
type Seen struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

// NewServer starts a Server answering with s.
func NewServer(t testing.TB, s Stream) *Server {
	t.Helper()
	srv := &Server{Req: make(chan Seen, 64)}
	srv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		select {
		case srv.Req <- Seen{Path: r.Method + " " + r.URL.Path, Header: r.Header.Clone(), Body: m}:
		default:
		}
		serve(w, r, s)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func serve(w http.ResponseWriter, r *http.Request, s Stream) {
	ct := s.CType
	if ct == "" {
		ct = "text/event-stream"
	}
	w.Header().Set("Content-Type", ct)
	if s.Status != 0 {
		w.WriteHeader(s.Status)
	}
	f := w.(http.Flusher)
	f.Flush()
	n := s.Chunk
	if n <= 0 {
		n = len(s.Body) + 1
	}
	for b := s.Body; b != ""; {
		k := min(n, len(b))
		if _, err := io.WriteString(w, b[:k]); err != nil {
			return
		}
		f.Flush()
		b = b[k:]
	}
	if s.Stall {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// Target returns a Target for srv with its own HTTP client.
func (srv *Server) Target() client.Target {
	return client.Target{BaseURL: srv.URL, HTTP: client.NewHTTPClient(4, false)}
}

// Transcript reads client/testdata/name.
func Transcript(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Class returns the error class of err, "" for nil, and fails on other error types.
func Class(t testing.TB, err error) string {
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
