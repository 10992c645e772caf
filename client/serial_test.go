package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// log is an Observer that records calls; it has no lock, so the race detector checks that
// Serial never lets two calls overlap.
type log struct{ calls []string }

func (l *log) add(s string)                  { l.calls = append(l.calls, s) }
func (l *log) Dispatched()                   { l.add("dispatch") }
func (l *log) ConnectStart()                 { l.add("connect") }
func (l *log) ConnectDone()                  { l.add("connected") }
func (l *log) WroteRequest()                 { l.add("wrote") }
func (l *log) Headers(s int)                 { l.add(fmt.Sprint("headers ", s)) }
func (l *log) EventRead()                    { l.add("event") }
func (l *log) Choice()                       { l.add("choice") }
func (l *log) Content(n int)                 { l.add(fmt.Sprint("content ", n)) }
func (l *log) Usage(p, c int)                { l.add(fmt.Sprintf("usage %d/%d", p, c)) }
func (l *log) Server(name string, v float64) { l.add(fmt.Sprintf("%s=%g", name, v)) }
func (l *log) Done()                         { l.add("done") }
func (l *log) String() string                { return strings.Join(l.calls, " ") }
func (l *log) has(s string) bool             { return strings.Contains(" "+l.String()+" ", " "+s+" ") }
func (l *log) count(s string) (n int) {
	for _, c := range l.calls {
		if c == s {
			n++
		}
	}
	return n
}
func (l *log) want(t *testing.T, want string) { t.Helper(); assertEq(t, l.String(), want) }

func assertEq(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("calls = %q, want %q", got, want)
	}
}

func TestSerialPairsAndCloses(t *testing.T) {
	l := &log{}
	s := NewSerial(l)
	s.ConnectDone() // without a start: dropped
	s.ConnectStart()
	s.ConnectStart() // a second dial attempt (another address): dropped
	s.ConnectDone()
	s.ConnectDone()
	s.Dispatched()
	s.WroteRequest()
	s.Headers(200)
	s.EventRead()
	s.Choice()
	s.Content(2)
	s.Usage(1, 2)
	s.Server("timings.x", 1.5)
	s.Done()
	s.Close()
	s.EventRead() // after Close: dropped
	s.WroteRequest()
	l.want(t, "connect connected dispatch wrote headers 200 event choice content 2 usage 1/2 timings.x=1.5 done")
}

// TestSerialConcurrent hammers a Serial from many goroutines; under -race a missing lock
// shows up as a report, and no call may be lost before Close.
func TestSerialConcurrent(t *testing.T) {
	l := &log{}
	s := NewSerial(l)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				s.EventRead()
			}
		})
	}
	wg.Wait()
	s.Close()
	if l.count("event") != 800 {
		t.Errorf("%d events, want 800", l.count("event"))
	}
}

// TestSerialTrace runs real requests: the first dials, the second reuses the connection.
func TestSerialTrace(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	c := NewHTTPClient(1, false)
	for i, want := range []string{"dispatch connect connected wrote headers 200", "dispatch wrote headers 200"} {
		l := &log{}
		s := NewSerial(l)
		req, _ := http.NewRequestWithContext(s.WithClientTrace(context.Background()), "POST", srv.URL, strings.NewReader("{}"))
		s.Dispatched()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		s.Headers(resp.StatusCode)
		s.Close()
		// WroteRequest may come after Headers (net/http's write loop); compare without order for it.
		got := strings.Replace(l.String(), " wrote", "", 1)
		if !l.has("wrote") || got != strings.Replace(want, " wrote", "", 1) {
			t.Errorf("request %d: calls %q, want %q", i, l, want)
		}
	}
}
