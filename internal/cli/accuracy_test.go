package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"servebench/load"
	"servebench/metrics"
	"servebench/sim"
)

// TestAccuracyAgainstFixedSimulator measures a simulator with fixed TTFT 100 ms and ITL 20 ms
// through `servebench run` at 64 concurrent streams of 32 tokens, and checks what we stamped
// against the simulator's truth log of the same run: when it wrote each token (wall clock),
// paired with our stamp of the same event through the request id. On a busy machine the
// simulator itself runs late (it reads requests late and writes tokens in bunches: a median
// ITL near 0 is then the truth, not our error), so the reference is what it did, not what it
// was configured to do; the bounds hold at a load average of 10 on 2 cores and more. The
// exact overhead figures come from the overhead benchmark, not from this test.
func TestAccuracyAgainstFixedSimulator(t *testing.T) {
	t.Parallel()
	truth := filepath.Join(t.TempDir(), "truth.jsonl")
	srv, url := startSimServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL, c.TruthFile = 100*time.Millisecond, 20*time.Millisecond, truth
	})
	js, rec := filepath.Join(t.TempDir(), "s.json"), filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "32",
		"--requests", "64", "--concurrency", "64", "--warmup", "0", "-o", rec, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if err := srv.Close(); err != nil { // flushes the truth log
		t.Fatal(err)
	}
	var s map[string]any
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s["completed"] != 64.0 {
		t.Fatalf("completed %v, want 64", s["completed"])
	}
	itl, _ := s["median_itl_ms"].(float64)
	writes, simITL := truthWrites(t, truth)
	// Each event: how far our stamp (kernel receive time, on the wall clock through the
	// header's start) lies outside the simulator's write of it, from its clock read before
	// the write to the one after the flush: 0 inside, negative before, positive after. On
	// loopback the bytes arrive during the write, so the stamp falls inside; a stamp taken at
	// our read, or an event given another's time, would be off by the client's own delays or
	// an ITL. (Against the stamp after the flush alone a busy machine shows a false error:
	// the write wakes our reader, which may run first while the simulator waits for a core.)
	// Events that came in one read share the receive time of its newest bytes
	// (load/observer.go): a client that fell behind reads several writes at once, so each
	// event is judged against the write of the last event that shares its stamp. The gaps
	// the truth predicts for what we read are the same: between the writes of the last events
	// of consecutive reads, and 0 within one read.
	hdr, recs := readRecords(t, rec)
	var delays, gaps []float64
	for _, r := range recs {
		w := writes[load.RequestID(r.Run, r.ID)]
		for i, e := range r.Events {
			last := i
			for last+1 < len(r.Events) && r.Events[last+1].T == e.T {
				last++
			}
			if last >= len(w) {
				break
			}
			at := hdr.Start.UnixNano() + e.T
			delays = append(delays, float64(at-min(max(at, w[last].began), w[last].written))/1e6)
			switch {
			case i == 0:
			case r.Events[i-1].T == e.T:
				gaps = append(gaps, 0)
			default: // event i-1 was the last of the previous read
				gaps = append(gaps, float64(w[last].written-w[i-1].written)/1e6)
			}
		}
	}
	if len(delays) < 64*32/2 {
		t.Fatalf("%d events paired with the truth log, want most of %d", len(delays), 64*32)
	}
	slices.Sort(delays)
	slices.Sort(gaps)
	med, p90, wantITL := metrics.Quantile(delays, 50), metrics.Quantile(delays, 90), metrics.Quantile(gaps, 50)
	t.Logf("event stamp outside the simulator's write: median %.3f ms, p90 %.3f ms over %d events; median ITL %.2f ms (truth %.2f, the simulator's own gaps %.2f)",
		med, p90, len(delays), itl, wantITL, simITL)
	if math.Abs(med) > 5 {
		t.Errorf("our event stamps are %.3f ms (median) off the simulator's writes", med)
		logQuality(t, hdr)
	}
	// Event times come from the kernel's receive times, so our gaps are the simulator's
	// write gaps plus the loopback's jitter (0 between events read at once).
	if math.Abs(itl-wantITL) > 0.1*wantITL+1 {
		t.Errorf("median ITL %.2f ms against the simulator's %.2f ms", itl, wantITL)
	}
}

// truthWrite is when the simulator wrote an event: its clock just before the write and just
// after the flush (Unix ns).
type truthWrite struct{ began, written int64 }

// truthWrites are, per request id, when the simulator wrote each content event, in order,
// and the median gap between consecutive ones' written_ns (ms).
func truthWrites(t *testing.T, path string) (map[string][]truthWrite, float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	written := map[string][]truthWrite{}
	var gaps []float64
	for line := range strings.Lines(string(b)) {
		var e struct {
			ID      string `json:"request_id"`
			Kind    string `json:"kind"`
			Written int64  `json:"written_ns"`
			Began   int64  `json:"write_began_ns"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("truth line %q: %v", line, err)
		}
		if e.Kind != "content" {
			continue
		}
		if e.Began <= 0 || e.Began > e.Written {
			t.Fatalf("truth line %q: want a write begun before it was written", line)
		}
		if w := written[e.ID]; len(w) > 0 {
			gaps = append(gaps, float64(e.Written-w[len(w)-1].written)/1e6)
		}
		written[e.ID] = append(written[e.ID], truthWrite{e.Began, e.Written})
	}
	if len(gaps) == 0 {
		t.Fatal("no gaps in the truth log")
	}
	slices.Sort(gaps)
	return written, metrics.Quantile(gaps, 50)
}
