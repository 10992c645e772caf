package cli

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"servebench/record"
	"servebench/sim"
)

// TestDefaultWarmupEndsLazyCompilation: against a simulator that compiles kernels for each
// new batch size and prefill length on first use (--lazy-compile), 8 users with prompt and
// output lengths drawn from log-normals and the default warmup: no measured request was in
// flight while the engine compiled. With the warmup of one request per user sent at once (the
// default before), the lone short prompts of the measured phase compiled new prefill shapes
// under measured requests in most seeds.
func TestDefaultWarmupEndsLazyCompilation(t *testing.T) {
	srv, url := startSimServer(t, func(c *sim.Config) { c.LazyCompile = 200 * time.Millisecond })
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--concurrency", "8", "--requests", "120",
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
// sizes the judged warmup never ran; against a simulator that compiles each new batch size
// and prefill length on first use (at --cold-start's cost per shape), the measured phase's
// first round (its first request per user, the ramp) ran while the engine compiled. The
// warmup's tail now ramps as the measured phase will: no request of the first round is in
// flight across a compile. (A compile later in the window, of a shape the steady state
// meets by chance, such as two prompts admitted in one step, is not the ramp's.)
func TestWarmupAutoMeetsTheMeasuredRamp(t *testing.T) {
	const users = 8
	for seed := range 2 {
		srv, url := startSimServer(t, func(c *sim.Config) { c.LazyCompile = 30 * time.Millisecond })
		p := filepath.Join(t.TempDir(), "r.jsonl")
		code, _, errs := runMain(t, "run", "-q", "--url", url, "--concurrency", fmt.Sprint(users), "--requests", "64",
			"--warmup", "auto", "--input-tokens", "128", "--output-tokens", "32", "--seed", fmt.Sprint(seed+1), "-o", p)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		h, recs := readRecords(t, p)
		compiles := srv.Phases().Compiles
		if len(compiles) == 0 {
			t.Fatal("the simulator compiled nothing: the test checks nothing")
		}
		var first []*record.Record
		for i := range recs {
			if recs[i].Measured() {
				first = append(first, &recs[i])
			}
		}
		slices.SortFunc(first, func(a, b *record.Record) int { return cmp.Compare(a.Sent, b.Sent) })
		first = first[:min(users, len(first))]
		for _, r := range first {
			sent, done := h.Start.Add(time.Duration(r.Sent)), h.Start.Add(time.Duration(r.Done))
			for _, c := range compiles {
				if sent.Before(c.End) && done.After(c.Start) {
					t.Errorf("seed %d: measured request %d, of the first round, was in flight %v–%v while the engine compiled %v–%v",
						seed+1, r.ID, sent.Format("15:04:05.000"), done.Format("15:04:05.000"),
						c.Start.Format("15:04:05.000"), c.End.Format("15:04:05.000"))
					break
				}
			}
		}
		t.Logf("seed %d: %d warmup requests (%s), %d compiles", seed+1, h.Ends[0].WarmupRequests, h.Ends[0].WarmupStop, len(compiles))
	}
}
