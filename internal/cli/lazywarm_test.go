package cli

import (
	"fmt"
	"math"
	"math/bits"
	"path/filepath"
	"testing"
	"time"

	"servebench/sim"
)

// TestDefaultWarmupEndsLazyCompilation: against a simulator that compiles kernels for each
// new batch size and prefill length on first use (--lazy-compile), 8 users with prompt and
// output lengths drawn from log-normals and the default warmup: no measured request was in
// flight while the engine compiled. With the warmup of one request per user sent at once (the
// default before), the lone short prompts of the measured phase compiled new prefill shapes
// under measured requests in most seeds. 56 measured requests (120 before: the test is serial,
// and it took 12 to 14 s of that phase): in this seed every compile is in the warmup either way
// (6), and with the old warmup (--warmup 8) the first 56 already put 9 measured requests in
// flight during a compile.
func TestDefaultWarmupEndsLazyCompilation(t *testing.T) {
	srv, url := startSimServer(t, func(c *sim.Config) { c.LazyCompile = 200 * time.Millisecond })
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--concurrency", "8", "--requests", "56",
		"--input-dist", "lognormal:512,256", "--output-dist", "lognormal:48,24", "--seed", "3", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, recs := readRecords(t, p)
	compiles := srv.Phases().Compiles
	if len(compiles) == 0 {
		t.Fatal("the simulator compiled nothing: the test checks nothing")
	}
	cold, warm := 0, 0
	for i := range recs {
		r := &recs[i]
		if !r.Measured() {
			warm++
			continue
		}
		sent, done := h.Start.Add(time.Duration(r.Sent)), h.Start.Add(time.Duration(r.Done))
		for _, c := range compiles {
			if sent.Before(c.End) && done.After(c.Start) {
				cold++
				t.Errorf("measured request %d (%d prompt tokens) was in flight %v–%v while the engine compiled %v–%v",
					r.ID, r.InputTokens, sent.Format("15:04:05.000"), done.Format("15:04:05.000"),
					c.Start.Format("15:04:05.000"), c.End.Format("15:04:05.000"))
				break
			}
		}
	}
	t.Logf("%d warmup requests, %d compiles, %d cold measured requests", warm, len(compiles), cold)
}

// TestWarmupAutoMeetsTheMeasuredRamp: --warmup auto keeps every user busy, so the ramp from
// one user in flight to N with which the measured phase starts after the drain met batch
// sizes the judged warmup never ran, and against a simulator that compiles each new batch
// size on first use (at --cold-start's cost per shape) the measured phase's first requests
// ran while the engine compiled. The warmup's tail now ramps as the measured phase will: no
// batch-size bucket is new after measuring began. (A prefill length is left out: two prompts
// admitted in one step once users send their second requests is a shape of the steady state
// that the judged warmup, whose users run in step, may not have met, and no ramp covers it.)
func TestWarmupAutoMeetsTheMeasuredRamp(t *testing.T) {
	t.Parallel()
	const users = 8
	bucket := func(v int) int { return bits.Len(uint(min(v, 512) - 1)) } // as the simulator rounds
	for seed := range 2 {
		srv, url := startSimServer(t, func(c *sim.Config) { c.LazyCompile = 30 * time.Millisecond })
		p := filepath.Join(t.TempDir(), "r.jsonl")
		code, _, errs := runMain(t, "run", "-q", "--url", url, "--concurrency", fmt.Sprint(users), "--requests", "32",
			"--warmup", "auto", "--input-tokens", "128", "--output-tokens", "32", "--seed", fmt.Sprint(seed+1), "-o", p)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		h, recs := readRecords(t, p)
		compiles := srv.Phases().Compiles
		if len(compiles) == 0 {
			t.Fatal("the simulator compiled nothing: the test checks nothing")
		}
		var first int64 = math.MaxInt64
		for i := range recs {
			if recs[i].Measured() {
				first = min(first, recs[i].Sent)
			}
		}
		measuring := h.Start.Add(time.Duration(first))
		seen := map[int]bool{}
		for _, c := range compiles {
			if b := bucket(c.Seqs); !seen[b] {
				seen[b] = true
				if c.End.After(measuring) {
					t.Errorf("seed %d: the engine compiled batch size %d at %v, %v after measuring began",
						seed+1, c.Seqs, c.Start.Format("15:04:05.000"), c.Start.Sub(measuring))
				}
			}
		}
		t.Logf("seed %d: %d warmup requests (%s), %d compiles", seed+1, h.Ends[0].WarmupRequests, h.Ends[0].WarmupStop, len(compiles))
	}
}
