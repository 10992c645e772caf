package sim

import (
	"fmt"
	"io"
	"math"
	"sync"
	"testing"
	"time"
)

const (
	accTokens = 32
	accTTFT   = 100 * time.Millisecond
	accITL    = 20 * time.Millisecond
)

// TestFixedModeAccuracy drives 64 concurrent fixed-mode streams and checks, by the test's
// own reading of the wire, that TTFT and ITL are what was configured and that each event
// arrived inside the truth hook's bracket of its write (WriteBegan before it, Written after
// its flush), give or take the client's own delay in reading it.
//
// The machine is shared with other work, so one unlucky run may be starved of CPU: the test
// takes the best of up to three attempts, and fails only if all three miss.
func TestFixedModeAccuracy(t *testing.T) {
	streams, tol, skewMax, lagMax := 64, 0.10, 2*time.Millisecond, 2*time.Millisecond
	if raceEnabled {
		// the race detector slows every goroutine several times over: 64 handlers starting at
		// once then add tens of ms to TTFT (130-146 ms seen on a loaded machine, 206-250 ms
		// beside two busy loops at load 16, every attempt), and the test's own reader, in the
		// same instrumented process, falls 70 ms behind the streams. Under -race it drives 16
		// streams, as the selftest test drives 128 instead of 1,024; the ±10% check of 64
		// runs without -race in .ci/run.
		streams, tol, skewMax, lagMax = 16, 0.60, 10*time.Millisecond, 10*time.Millisecond
	}
	var problems []string
	for attempt := 1; attempt <= 3; attempt++ {
		r := measureFixed(t, streams)
		if t.Failed() {
			return
		}
		problems = r.check(tol, skewMax, lagMax)
		t.Logf("attempt %d: median TTFT %v, median ITL %v, median skew %v, lag %+v", attempt, r.ttft, r.itl, r.skew, r.lag)
		if len(problems) == 0 {
			return
		}
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// accResult is what one accuracy run measured.
type accResult struct {
	ttft, itl, skew time.Duration
	lag             LagStats
}

func (r accResult) check(tol float64, skewMax, lagMax time.Duration) (problems []string) {
	off := func(got, want time.Duration) bool { return math.Abs(float64(got-want)) > tol*float64(want) }
	if off(r.ttft, accTTFT) {
		problems = append(problems, fmt.Sprintf("median TTFT %v, want %v ± %.0f%%", r.ttft, accTTFT, tol*100))
	}
	if off(r.itl, accITL) {
		problems = append(problems, fmt.Sprintf("median ITL %v, want %v ± %.0f%%", r.itl, accITL, tol*100))
	}
	// Skew is how far outside its write's bracket the client read an event: 0 inside, below
	// 0 before the write began (impossible but for the clocks' rounding), above 0 after the
	// flush (the client's own delay). Against Written alone it can be ms negative on a busy
	// machine: the write wakes the client, which may run first while the handler waits for
	// a core to stamp Written.
	if r.skew < -time.Millisecond || r.skew > skewMax {
		problems = append(problems, fmt.Sprintf("median client arrival outside its write %v, want within [−1ms, %v]", r.skew, skewMax))
	}
	if r.lag.P50 > lagMax {
		problems = append(problems, fmt.Sprintf("engine lag p50 %v: the engine cannot keep its schedule", r.lag.P50))
	}
	return problems
}

// measureFixed runs one accuracy round of streams against a fresh server.
func measureFixed(t *testing.T, streams int) accResult {
	s, base := startSim(t, fixedConfig(accTTFT, accITL))
	var mu sync.Mutex
	written := map[string]TruthEvent{} // "id/seq" → its write
	s.SetTruth(func(ev TruthEvent) {
		if ev.Kind == "content" {
			mu.Lock()
			written[ev.RequestID+"/"+itoa(ev.Seq)] = ev
			mu.Unlock()
		}
	})
	warmConnections(t, base, streams)
	var (
		wg                 sync.WaitGroup
		ttfts, itls, skews []time.Duration
	)
	// Starts are spread over one ITL, as independent users' would be, so that the 64 streams'
	// events interleave instead of all 64 landing in the same microsecond every 20 ms.
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * accITL / time.Duration(streams))
			id := fmt.Sprintf("acc-%p-%d", s, i)
			resp, sent := postTimed(t, base+"/v1/completions", completion(words(8), accTokens), "X-Request-Id", id)
			defer resp.Body.Close()
			evs, err := readSSE(resp.Body)
			d := decode(t, evs)
			if err != nil || len(d.content) != accTokens || !d.done {
				t.Errorf("stream %d: %d content events, done=%v, err %v", i, len(d.content), d.done, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ttfts = append(ttfts, d.content[0].at.Sub(sent))
			for k := 1; k < len(d.content); k++ {
				itls = append(itls, d.content[k].at.Sub(d.content[k-1].at))
			}
			for k, e := range d.content {
				w, ok := written[id+"/"+itoa(k)]
				if !ok {
					t.Errorf("truth hook missed %s event %d", id, k)
					return
				}
				skews = append(skews, outside(e.at, w.WriteBegan, w.Written))
			}
		}()
	}
	wg.Wait()
	return accResult{median(ttfts), median(itls), median(skews), s.Lag()}
}

// outside is how far at lies outside [from, to]: 0 inside, negative before, positive after.
func outside(at, from, to time.Time) time.Duration {
	switch {
	case at.Before(from):
		return at.Sub(from)
	case at.After(to):
		return at.Sub(to)
	}
	return 0
}

// warmConnections opens n keep-alive connections with short requests, so that a timing test
// measures streaming, not 64 simultaneous dials.
func warmConnections(t *testing.T, base string, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := post(t, base+"/v1/completions", map[string]any{"prompt": "hi", "max_tokens": 1})
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
}

func itoa(i int) string { return formatInt(i) }
