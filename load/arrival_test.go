package load

import (
	"context"
	"testing"
	"time"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/client/openai"
	"servebench/record"
	"servebench/workload"
)

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
	body := `data: {"choices":[{"index":0,"text":"a"}]}` + "\n\n" + "data: [DONE]\n\n"
	srv := clienttest.NewServer(t, clienttest.Stream{Body: body})
	const stall = 200 * time.Millisecond
	for _, kernel := range []bool{true, false} {
		tg := client.Target{BaseURL: srv.URL, HTTP: client.NewHTTPClientClock(1, false, kernel)}
		be, err := openai.New(tg, "openai-completions")
		if err != nil {
			t.Fatal(err)
		}
		rec := &record.Record{}
		st := &stamp{t0: time.Now(), rec: rec}
		req := &client.Request{Request: &workload.Request{Prompt: "x", OutputTokens: 1}, Model: "m"}
		if err := be.Do(context.Background(), req, slowHeaders{st, stall}); err != nil {
			t.Fatal(err)
		}
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
