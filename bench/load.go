package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"servebench/load"
	"servebench/load/pacer"
	"servebench/metrics"
	"servebench/runspec"
	"servebench/workload"
)

// LoadConfig is the load shape of a resolved spec: closed loop, or an open-loop schedule
// (constant/Poisson/gamma rate, ramp, or a trace whose arrivals are returned too), narrowed
// to this process's shard.
func LoadConfig(ctx context.Context, s *runspec.Spec) (load.Config, []pacer.Arrival, error) {
	lc := load.Config{Concurrency: s.Concurrency, MaxConcurrency: s.MaxConcurrency, Warmup: s.Warmup,
		Requests: s.Requests, Duration: s.Duration, Grace: s.Grace, RequestTimeout: s.RequestTimeout,
		WarmupDuration: s.WarmupDuration, CooldownDuration: s.CooldownDuration, MaxErrors: s.MaxErrors}
	lc.ThinkTime, lc.ThinkExp, _ = s.Think() // validated
	if s.WarmupAuto {
		floor := s.DefaultWarmup()
		if s.Stages == "" && s.Concurrency > 0 {
			floor = s.Concurrency // one request per user: the judge decides how much more
		}
		lc.WarmupAuto, lc.WarmupMin, lc.WarmupMax, lc.WarmupTimeout, lc.WarmupTolerance =
			true, floor, s.WarmupMax, s.WarmupTimeout, s.WarmupTolerance
	}
	lc.ThinkSeed = s.Seed
	if s.MaxErrorRate != "" {
		lc.MaxErrorRate, _ = metrics.ParseShare("--max-error-rate", s.MaxErrorRate) // validated
	}
	sh, err := s.ShardOf()
	if err != nil {
		return lc, nil, err
	}
	var as []pacer.Arrival
	switch {
	case s.Stages != "":
		if err := stagesConfig(s, &lc); err != nil { // stages.go
			return lc, nil, err
		}
	case s.Rate > 0:
		if lc.Pacer, err = pacer.New(s.Arrival, s.Rate, s.Burstiness, s.Seed); err != nil {
			return lc, nil, runspec.Usage(err)
		}
	case s.Ramp != "":
		unit, err := pacer.New(s.Arrival, 1, s.Burstiness, s.Seed)
		if err != nil {
			return lc, nil, runspec.Usage(err)
		}
		if lc.Pacer, err = pacer.ParseRamp(s.Ramp, s.Duration, unit); err != nil {
			return lc, nil, runspec.Usage(err)
		}
	case s.Trace != "":
		if as, err = readTrace(ctx, s); err != nil {
			return lc, nil, err
		}
		lc.Pacer = pacer.NewTrace(as)
		if lc.Requests == 0 && lc.Duration == 0 {
			lc.Requests = max(len(as)-lc.Warmup, 1)
		}
	}
	if s.TraceDataset() {
		return lc, nil, nil // its arrivals and its shard come with the workload (dataset.go)
	}
	return lc, as, shard{Shard: sh}.apply(s, &lc, as)
}

// readTrace reads --trace in one bounded, cancellable pass.
func readTrace(ctx context.Context, s *runspec.Spec) ([]pacer.Arrival, error) {
	max, _ := s.MaxInputBytes() // validated
	in, err := workload.OpenInput(ctx, s.Trace, max)
	if err != nil {
		return nil, traceErr(err)
	}
	defer in.Close()
	as, err := pacer.ReadTrace(in, s.Trace)
	return as, traceErr(err)
}

// traceErr makes a --trace error a usage error, except Ctrl-C while reading it.
func traceErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("--trace: %w", err)
	case errors.Is(err, workload.ErrInputTooLarge):
		return runspec.Usagef("--trace: %v (--max-input raises it)", err)
	}
	return runspec.Usagef("--trace: %v", err)
}

// shard is this process's part of a run split across n load generators (--shard i/n).
// Request k of the workload goes to shard k mod n, so the shards together send exactly the
// unsplit run's requests; each shard takes its share of the users (or of the arrival rate),
// and `servebench report shard-*.jsonl` merges the files back into one run. A replayed trace
// whose rows are sessions is split by session instead (bySession): each session's turns go
// to one shard, so that every later turn waits for the turn before it.
type shard struct {
	runspec.Shard
	// ids, when set, are the whole run's indices of this shard's requests, in order (a split
	// by session of a trace of total rows); nil: request k is this shard's when k mod n = i
	ids   []int
	total int
}

// Split reports whether the run is split at all.
func (s shard) Split() bool { return s.N > 1 }

// share is how many of x items k = 0..x−1 fall to this shard (k mod n = i, or k in ids).
func (s shard) share(x int) int {
	if !s.Split() {
		return x
	}
	if s.ids != nil {
		n, _ := slices.BinarySearch(s.ids, x)
		return n
	}
	if x <= s.I {
		return 0
	}
	return (x - s.I + s.N - 1) / s.N
}

// bySession returns s split by the sessions of follows (a replayed trace's: follows[k] names
// the turn request k follows): a session's every turn goes to the shard of its first turn,
// k mod n of that turn's index, and a row of no session to k mod n as before, so that no
// turn's previous turn is sent by another process, whose end this one cannot wait for.
// Without sessions it returns s unchanged.
func (s shard) bySession(follows []*workload.Follow) shard {
	if !s.Split() || follows == nil {
		return s
	}
	root := make([]int, len(follows))
	s.ids, s.total = []int{}, len(follows)
	for k, f := range follows {
		root[k] = k
		if f != nil && f.Prev >= 0 && f.Prev < k {
			root[k] = root[f.Prev]
		}
		if root[k]%s.N == s.I {
			s.ids = append(s.ids, k)
		}
	}
	return s
}

// apply turns the whole run's load shape into this shard's: its share of users, cap, warmup
// and requests, and 1/n of the arrival rate (seeded per shard, so the shards' arrivals are
// independent and together form the unsplit process: n Poisson streams of rate r/n are one of
// rate r). A trace is split like the workload, arrival k to shard k mod n (or by session),
// exactly.
func (s shard) apply(sp *runspec.Spec, lc *load.Config, arrivals []pacer.Arrival) error {
	if !s.Split() {
		return nil
	}
	users := shard{Shard: s.Shard} // users and the cap are split k mod n, as ever
	lc.Concurrency, lc.MaxConcurrency = users.share(lc.Concurrency), users.share(lc.MaxConcurrency)
	// the whole run sends warmup requests k < W and measured ones W <= k < W+R; this shard
	// sends those that fall to it: share(W) warmup, then share(W+R) − share(W) measured
	w, r := lc.Warmup, lc.Requests
	lc.Warmup = s.share(w)
	if r > 0 {
		lc.Requests = s.share(w+r) - lc.Warmup
	}
	switch {
	case sp.Rate > 0:
		p, err := pacer.New(sp.Arrival, sp.Rate/float64(s.N), sp.Burstiness, sp.Seed+int64(s.I))
		if err != nil {
			return runspec.Usage(err)
		}
		lc.Pacer = p
	case arrivals != nil:
		var out []pacer.Arrival
		if s.ids != nil {
			for _, k := range s.ids {
				out = append(out, arrivals[k])
			}
		} else {
			for k := s.I; k < len(arrivals); k += s.N {
				out = append(out, arrivals[k])
			}
		}
		lc.Pacer = pacer.NewTrace(out)
	}
	return nil
}

// id maps this shard's j-th request to its index in the whole run (past a split by
// session's own requests, to indices past the whole run's that no other shard takes).
func (s shard) id(j int) int {
	switch {
	case !s.Split():
		return j
	case s.ids == nil:
		return j*s.N + s.I
	case j < len(s.ids):
		return s.ids[j]
	}
	return s.total + (j-len(s.ids))*s.N + s.I
}
