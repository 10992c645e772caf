package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"servebench/client"
	"servebench/client/openai"
	"servebench/load/pacer"
	"servebench/record"
	"servebench/sim"
	"servebench/sim/simtest"
	"servebench/stat"
	"servebench/workload"
)

// TestSendLatenessBreakdown is a measuring harness, not a check: it runs an open loop (a
// Poisson schedule) against the simulator on loopback and splits each request's lateness by
// where it accrued. It runs only with SENDLATE set (SENDLATE=N sends N requests at
// SENDLATE_RATE per s, default 300 at 20/s):
//
//	SENDLATE=300 go test -count=1 -run TestSendLatenessBreakdown -v ./load
//
// Each stage's figure is the time from the scheduled instant to that stage:
//   - wake: the scheduling loop asked the pacer for the next arrival (it woke for this
//     one, took it and started its goroutine);
//   - do: the request's goroutine entered Backend.Do (its record and request were made);
//   - dispatched: the request was handed to the HTTP client (the body was built): the
//     lateness the records report;
//   - sent: the request was written (WroteRequest), with the connection set-up, if any,
//     counted apart.
func TestSendLatenessBreakdown(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SENDLATE"))
	if n <= 0 {
		t.Skip("a measuring harness: set SENDLATE=N to run it")
	}
	rate := 20.0
	if v, err := strconv.ParseFloat(os.Getenv("SENDLATE_RATE"), 64); err == nil && v > 0 {
		rate = v
	}
	c := sim.DefaultConfig()
	c.TTFT, c.ITL = 20*time.Millisecond, 5*time.Millisecond
	_, url := simtest.Start(t, c)
	target := client.Target{BaseURL: url, HTTP: client.NewHTTPClient(64, false)}
	if strings.Contains(os.Getenv("SENDLATE_FLAGS"), "prewarm") {
		t.Logf("prewarm: %d connections", client.Prewarm(context.Background(), target, 64))
	}
	be, err := openai.New(target, openai.APICompletions)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]workload.Request, 64)
	for i := range w {
		w[i] = workload.Request{ID: i, Prompt: strings.Repeat(fmt.Sprintf("word%d ", i), 100), InputTokens: 200, OutputTokens: 8}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	offsets := make([]time.Duration, n)
	at := 100 * time.Millisecond
	for i := range offsets {
		offsets[i] = at
		at += time.Duration(rng.ExpFloat64() / rate * 1e9)
	}
	tp := &timedPacer{Trace: pacer.Trace{Offsets: offsets}, asked: make([]int64, n+1)}
	tb := &timedBackend{Backend: be, entered: make([]int64, n)}
	col := &collector{}
	r := &Runner{Backend: tb, Workload: w, Sink: col.sink, PromptSource: record.SourceTokenizer,
		Template: client.Request{FixedOutput: true}}
	t0 := time.Now()
	tp.t0, tb.t0 = t0, t0
	gcBefore := gcPauses()
	if err := r.Run(context.Background(), context.Background(), t0, Config{Pacer: tp, Requests: n}); err != nil {
		t.Fatal(err)
	}
	gcAfter := gcPauses()
	var wake, do, disp, sent, sentNoDial, dials []float64
	for _, rec := range col.recs {
		if rec.ErrorClass != "" {
			t.Errorf("request %d: %s %s", rec.ID, rec.ErrorClass, rec.Error)
			continue
		}
		sched := rec.Scheduled
		wake = append(wake, float64(tp.asked[rec.ID+1]-sched))
		do = append(do, float64(tb.entered[rec.ID]-sched))
		disp = append(disp, float64(rec.Dispatched-sched))
		sent = append(sent, float64(rec.Sent-sched))
		if rec.Connect > 0 {
			dials = append(dials, float64(rec.Connect))
		} else {
			sentNoDial = append(sentNoDial, float64(rec.Sent-sched))
		}
	}
	row := func(name string, x []float64) {
		slices.Sort(x)
		p := func(q float64) float64 { v, _ := stat.NearestRank(x, q*100); return v / 1e3 }
		t.Logf("%-22s n=%4d  p50 %7.0f µs  p90 %7.0f  p99 %7.0f  max %7.0f", name, len(x), p(0.5), p(0.9), p(0.99), p(1))
	}
	t.Logf("%d requests at %.0f/s, GOMAXPROCS %d, GC cycles %d", n, rate, runtime.GOMAXPROCS(0), gcAfter-gcBefore)
	row("wake (loop woke)", wake)
	row("do (Backend.Do)", do)
	row("dispatched", disp)
	row("sent", sent)
	row("sent, reused conn", sentNoDial)
	row("dial (Connect)", dials)
}

// timedPacer notes when the scheduling loop asks for each arrival: it asks for n+1 right
// after handing out n.
type timedPacer struct {
	pacer.Trace
	t0    time.Time
	asked []int64
}

func (p *timedPacer) Due(n int) (time.Duration, bool) {
	if n < len(p.asked) {
		p.asked[n] = int64(time.Since(p.t0))
	}
	return p.Trace.Due(n)
}

// timedBackend notes when each request's goroutine enters Do, by request ID.
type timedBackend struct {
	client.Backend
	t0      time.Time
	mu      sync.Mutex
	entered []int64
}

func (b *timedBackend) Do(ctx context.Context, req *client.Request, obs client.Observer) error {
	now := int64(time.Since(b.t0))
	id, _ := strconv.Atoi(req.RequestID[strings.LastIndexByte(req.RequestID, '-')+1:])
	b.mu.Lock()
	if id < len(b.entered) {
		b.entered[id] = now
	}
	b.mu.Unlock()
	return b.Backend.Do(ctx, req, obs)
}

// gcPauses is the number of GC cycles so far.
func gcPauses() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
