package cli

import (
	"path/filepath"
	"slices"
	"testing"

	"servebench/metrics"
	"servebench/record"
	"servebench/sim"
)

// TestSweepThroughputPointAtSaturation: sweep --auto's maximum-throughput point against a
// simulator with 4 slots reports the rate at which the server completed its measured
// requests, within 30%. Every user's warmup request was sent at once; before the first
// measured request waited for the warmup to drain, the measured requests queued behind it
// and the point reported about half the server's rate (the window opened with seconds of
// warmup-only service).
func TestSweepThroughputPointAtSaturation(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) {
		c.TTFT, c.ITL = 0, 0 // model mode: a continuous-batching engine
		c.MaxNumSeqs = 4
	})
	p := filepath.Join(t.TempDir(), "s.jsonl")
	code, _, errs := runMain(t, "sweep", "-q", "--url", url, "--auto", "--points", "0", "--requests", "24",
		"--input-tokens", "64", "--output-tokens", "32", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, recs := readRecords(t, p)
	if len(h.Ends) != 2 {
		t.Fatalf("%d runs, want the synchronous and the throughput point", len(h.Ends))
	}
	peak := h.Ends[1].Run
	a := metrics.NewAccumulator(metrics.Options{})
	a.SetHeader(h)
	var warmEnd int64
	var done []int64
	for i := range recs {
		r := &recs[i]
		switch {
		case r.Run != peak:
		case r.Phase == record.PhaseWarmup:
			warmEnd = max(warmEnd, r.Done)
		case r.Measured() && r.OK():
			a.Add(r)
			done = append(done, r.Done)
		}
	}
	slices.Sort(done)
	for i := range recs {
		if r := &recs[i]; r.Run == peak && r.Measured() && r.Sent < warmEnd {
			t.Errorf("measured request %d sent at %d ns, before the warmup drained at %d ns", r.ID, r.Sent, warmEnd)
		}
	}
	if len(done) != 24 {
		t.Fatalf("%d measured completions at the throughput point, want 24", len(done))
	}
	// the server's own rate: its completions between the first and the last batch of 4,
	// which leaves out the ramp-in and the drain that any window must hold
	k1, k2 := 3, len(done)-5
	server := float64(k2-k1) / (float64(done[k2]-done[k1]) / 1e9)
	s := a.Summary()
	if s.RequestThroughput == nil {
		t.Fatal("no throughput")
	}
	got := *s.RequestThroughput
	t.Logf("throughput point: %.2f req/s; server completed %.2f req/s", got, server)
	// within 30%: the defect read about half; beside two busy loops under -race the window's
	// ramp-in and drain (a batch of 4 each, of 6) cost a correct point 20% (18.19 against 22.86)
	if got < 0.7*server || got > 1.3*server {
		t.Errorf("throughput point reports %.2f req/s; the server completed %.2f req/s (want within 30%%)", got, server)
	}
}
