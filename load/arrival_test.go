package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/client/openai"
	"servebench/record"
	"servebench/workload"
)

// primedClient returns an HTTP client whose kernel receive times are on: Linux turns them on
// for the system from deferred work when the first socket asks, so the first segments a
// fresh process receives may carry none (those events are stamped when read, as with the
// read clock). A request through the client, answered by srv, leaves a connection open that
// keeps them on.
func primedClient(t *testing.T, srv *clienttest.Server, kernel bool) client.Target {
	t.Helper()
	tg := client.Target{BaseURL: srv.URL, HTTP: client.NewHTTPClientClock(1, false, kernel)}
	resp, err := tg.HTTP.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	time.Sleep(20 * time.Millisecond)
	return tg
}

// slowHeaders is the real stamp observer with a client that stalls after the headers, as a
// busy load generator would: the first event's bytes wait in the socket meanwhile.
type slowHeaders struct {
	*stamp
	stall time.Duration
}

func (s slowHeaders) Headers(status int) { s.stamp.Headers(status); time.Sleep(s.stall) }

// With the kernel clock an event is stamped when its bytes arrived, not when the stalled
// client got round to reading them; with the read clock the stall is in the stamp.
func TestStampUsesKernelReceiveTime(t *testing.T) {
	if !client.KernelArrivalsSupported {
		t.Skip("kernel receive times are read on Linux (amd64, arm64) only")
	}
	srv := oneEventServer(t)
	const stall = 200 * time.Millisecond
	for _, kernel := range []bool{true, false} {
		rec, st := stampOne(t, srv, kernel, func(st *stamp) client.Observer { return slowHeaders{st, stall} })
		st.finish(record.SourceRequested)
		if len(rec.Events) != 1 || rec.Headers == 0 || rec.Done < rec.Events[0].T || rec.Events[0].T < rec.Headers {
			t.Fatalf("kernel %v: record out of order: headers %d, events %v, done %d", kernel, rec.Headers, rec.Events, rec.Done)
		}
		gap := time.Duration(rec.Events[0].T - rec.Headers)
		t.Logf("kernel clock %v: first event %v after the headers (client stalled %v)", kernel, gap, stall)
		if kernel && gap > stall/2 {
			t.Errorf("kernel clock: event stamped %v after the headers; the server sent it at once (the %v stall is the client's)", gap, stall)
		}
		if !kernel && gap < stall {
			t.Errorf("read clock: event stamped %v after the headers, before the client's %v stall ended", gap, stall)
		}
	}
}

// slowWrite is the real stamp observer with a client whose writing goroutine waits for a
// core after the WroteRequest hook, before the flush that puts the request on the wire.
type slowWrite struct {
	*stamp
	stall time.Duration
}

func (s slowWrite) WroteRequest() { s.stamp.WroteRequest(); time.Sleep(s.stall) }

// With the kernel clocks a request is stamped sent when the kernel sent its last byte, so a
// writer's stall between the hook and the flush stays out of TTFT (the time from sent to the
// answer); with the write clock it is in it.
func TestStampUsesKernelSendTime(t *testing.T) {
	if !client.KernelArrivalsSupported {
		t.Skip("kernel send times are read on Linux (amd64, arm64) only")
	}
	srv := oneEventServer(t)
	const stall = 100 * time.Millisecond
	for _, kernel := range []bool{true, false} {
		rec, st := stampOne(t, srv, kernel, func(st *stamp) client.Observer { return slowWrite{st, stall} })
		if rec.Sent < rec.Dispatched || rec.Headers < rec.Sent {
			t.Fatalf("kernel %v: dispatched %d, sent %d, headers %d: out of order", kernel, rec.Dispatched, rec.Sent, rec.Headers)
		}
		wait := time.Duration(rec.Headers - rec.Sent)
		t.Logf("kernel clocks %v: headers %v after sent (writer stalled %v before its flush), kernel stamp %v", kernel, wait, stall, st.kernelSent)
		switch {
		case kernel && !st.kernelSent:
			t.Log("the kernel gave this loopback write no transmit time: stamped at the hook")
		case kernel && wait > stall/2:
			t.Errorf("kernel clock: headers %v after sent; the server answered at once (the %v stall is the client's)", wait, stall)
		case !kernel && (wait < stall || st.kernelSent):
			t.Errorf("write clock: headers %v after sent (kernel %v), want the writer's %v stall in it", wait, st.kernelSent, stall)
		}
	}
}

// A run asked for kernel send times counts its send stamps and those taken at the hook; the
// fake backend's connection-less requests all fall back.
func TestRunnerCountsWriteSends(t *testing.T) {
	c := &collector{}
	r := newRunner(&fakeBackend{gap: time.Millisecond}, c, 3)
	r.KernelSends = true
	var sends, write int64 = -1, -1
	r.OnEnd = func(o Outcome) { sends, write = o.Sends, o.WriteSends }
	if err := r.Run(context.Background(), context.Background(), time.Now(), Config{Concurrency: 2, Requests: 4}); err != nil {
		t.Fatal(err)
	}
	if sends != 4 || write != 4 {
		t.Errorf("sends %d, at the hook %d; want 4 and 4 (4 requests, no kernel send times)", sends, write)
	}
}

// Events that arrived in one segment share its receive time exactly: converting the same
// kernel time twice must not set them nanoseconds apart (an ITL of 20 ns would be noise).
func TestEventsOfOneReadShareTheirStamp(t *testing.T) {
	if !client.KernelArrivalsSupported {
		t.Skip("kernel receive times are read on Linux (amd64, arm64) only")
	}
	ev := `data: {"choices":[{"index":0,"text":"a"}]}` + "\n\n"
	srv := clienttest.NewServer(t, clienttest.Stream{Body: ev + ev + ev + "data: [DONE]\n\n"}) // one write
	be, err := openai.New(primedClient(t, srv, true), "openai-completions")
	if err != nil {
		t.Fatal(err)
	}
	rec := &record.Record{}
	st := &stamp{t0: time.Now(), rec: rec}
	req := &client.Request{Request: &workload.Request{Prompt: "x", OutputTokens: 3}, Model: "m"}
	if err := be.Do(context.Background(), req, st); err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != 3 {
		t.Fatalf("%d events, want 3", len(rec.Events))
	}
	if e := rec.Events; e[0].T != e[1].T || e[1].T != e[2].T || rec.Done != e[2].T {
		t.Errorf("events of one write stamped %d, %d, %d, done %d: want one time", e[0].T, e[1].T, e[2].T, rec.Done)
	}
}

// Over TLS, with HTTP/1.1 and with HTTP/2 (whose frames one reader goroutine takes off the
// connection for every stream), an event is still stamped when its bytes arrived.
func TestKernelReceiveTimeOverTLS(t *testing.T) {
	if !client.KernelArrivalsSupported {
		t.Skip("kernel receive times are read on Linux (amd64, arm64) only")
	}
	body := `data: {"choices":[{"index":0,"text":"a"}]}` + "\n\n" + "data: [DONE]\n\n"
	for _, h2 := range []bool{false, true} {
		protos := make(chan int, 4)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			protos <- r.ProtoMajor
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, body)
		}))
		srv.EnableHTTP2 = h2
		srv.StartTLS()
		tg := client.Target{BaseURL: srv.URL, HTTP: client.NewHTTPClientClock(1, true, true)}
		resp, err := tg.HTTP.Get(srv.URL) // prime the kernel's timestamps (see primedClient)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		time.Sleep(20 * time.Millisecond)
		be, err := openai.New(tg, "openai-completions")
		if err != nil {
			t.Fatal(err)
		}
		const stall = 200 * time.Millisecond
		rec := &record.Record{}
		st := &stamp{t0: time.Now(), rec: rec}
		req := &client.Request{Request: &workload.Request{Prompt: "x", OutputTokens: 1}, Model: "m"}
		if err := be.Do(context.Background(), req, slowHeaders{st, stall}); err != nil {
			t.Fatalf("h2 %v: %v", h2, err)
		}
		srv.Close()
		prime, measured := <-protos, <-protos
		if want := map[bool]int{false: 1, true: 2}[h2]; prime != want || measured != want {
			t.Errorf("h2 %v: the requests did not use HTTP/%d", h2, want)
		}
		if len(rec.Events) != 1 {
			t.Fatalf("h2 %v: %d events", h2, len(rec.Events))
		}
		gap := time.Duration(rec.Events[0].T - rec.Headers)
		t.Logf("HTTP/2 %v: first event %v after the headers (client stalled %v)", h2, gap, stall)
		if gap > stall/2 {
			t.Errorf("HTTP/2 %v: event stamped %v after the headers; the server sent it at once", h2, gap)
		}
	}
}

// A run asked for the kernel clock counts its event stamps and those that fell back to the
// read time; the fake backend's connection-less events all fall back.
func TestRunnerCountsReadStamps(t *testing.T) {
	c := &collector{}
	r := newRunner(&fakeBackend{gap: time.Millisecond}, c, 3)
	r.KernelClock = true
	var total, read int64 = -1, -1
	r.OnEnd = func(o Outcome) { total, read = o.Stamps, o.ReadStamps }
	if err := r.Run(context.Background(), context.Background(), time.Now(), Config{Concurrency: 2, Requests: 4}); err != nil {
		t.Fatal(err)
	}
	if total != 12 || read != 12 {
		t.Errorf("stamps %d, at the read %d; want 12 and 12 (4 requests × 3 events, no receive times)", total, read)
	}
}

// Over HTTP/2 the write hook can run after the headers were stamped at their receive time;
// the send time is then capped at the headers, so TTFT cannot go negative.
func TestSentNeverAfterHeaders(t *testing.T) {
	rec := &record.Record{}
	st := &stamp{t0: time.Now().Add(-time.Second), rec: rec}
	rec.Headers = int64(500 * time.Millisecond) // stamped from the kernel, before this hook ran
	st.WroteRequest()
	if rec.Sent != rec.Headers {
		t.Errorf("sent %d after the headers %d", rec.Sent, rec.Headers)
	}
}

// oneEventServer streams one content event and [DONE].
func oneEventServer(t *testing.T) *clienttest.Server {
	body := `data: {"choices":[{"index":0,"text":"a"}]}` + "\n\n" + "data: [DONE]\n\n"
	return clienttest.NewServer(t, clienttest.Stream{Body: body})
}

// stampOne sends one request to srv through the real stamp observer, wrapped by wrap, with the
// kernel clocks on or off, and returns its record and observer.
func stampOne(t *testing.T, srv *clienttest.Server, kernel bool, wrap func(*stamp) client.Observer) (*record.Record, *stamp) {
	t.Helper()
	be, err := openai.New(primedClient(t, srv, kernel), "openai-completions")
	if err != nil {
		t.Fatal(err)
	}
	rec := &record.Record{}
	st := &stamp{t0: time.Now(), rec: rec}
	req := &client.Request{Request: &workload.Request{Prompt: "x", OutputTokens: 1}, Model: "m"}
	if err := be.Do(context.Background(), req, wrap(st)); err != nil {
		t.Fatal(err)
	}
	return rec, st
}
