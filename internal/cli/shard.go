package cli

import (
	"servebench/load"
	"servebench/load/pacer"
	"servebench/record"
)

// shard is this process's part of a run split across n load generators (--shard i/n).
// Request k of the workload goes to shard k mod n, so the shards together send exactly the
// unsplit run's requests; each shard takes its share of the users (or of the arrival rate),
// and `servebench report shard-*.jsonl` merges the files back into one run.
type shard struct{ i, n int }

// shardOf parses --shard; the zero shard (n = 0) means the run is not split.
func (c *runConfig) shardOf() (shard, error) {
	if c.Shard == "" {
		return shard{}, nil
	}
	i, n, err := record.ParseShard(c.Shard)
	if err != nil {
		return shard{}, usageErr("--shard: %v", err)
	}
	return shard{i, n}, nil
}

func (s shard) split() bool { return s.n > 1 }

// share is how many of x items k = 0..x−1 fall to this shard (k mod n = i).
func (s shard) share(x int) int {
	if !s.split() {
		return x
	}
	if x <= s.i {
		return 0
	}
	return (x - s.i + s.n - 1) / s.n
}

// validate refuses splits that cannot be made fairly.
func (s shard) validate(c *runConfig) error {
	switch {
	case !s.split():
		return nil
	case c.Ramp != "":
		return usageErr("--shard with --ramp is not supported: split a constant --rate or a --trace instead")
	case c.Concurrency > 0 && c.Concurrency < s.n:
		return usageErr("--concurrency %d is fewer users than the %d shards", c.Concurrency, s.n)
	case c.MaxConcurrency > 0 && c.MaxConcurrency < s.n:
		return usageErr("--max-concurrency %d is smaller than the %d shards", c.MaxConcurrency, s.n)
	}
	return nil
}

// apply turns the whole run's load shape into this shard's: its share of users, cap, warmup
// and requests, and 1/n of the arrival rate (seeded per shard, so the shards' arrivals are
// independent and together form the unsplit process: n Poisson streams of rate r/n are one of
// rate r). A trace is split like the workload, arrival k to shard k mod n, exactly.
func (s shard) apply(c *runConfig, lc *load.Config, arrivals []pacer.Arrival) error {
	if !s.split() {
		return nil
	}
	lc.Concurrency, lc.MaxConcurrency = s.share(lc.Concurrency), s.share(lc.MaxConcurrency)
	// the whole run sends warmup requests k < W and measured ones W <= k < W+R; this shard
	// sends those with k mod n = i: share(W) warmup, then share(W+R) − share(W) measured
	w, r := lc.Warmup, lc.Requests
	lc.Warmup = s.share(w)
	if r > 0 {
		lc.Requests = s.share(w+r) - lc.Warmup
	}
	switch {
	case c.Rate > 0:
		p, err := pacer.New(c.Arrival, c.Rate/float64(s.n), c.Burstiness, c.Seed+int64(s.i))
		if err != nil {
			return usageErr("%v", err)
		}
		lc.Pacer = p
	case arrivals != nil:
		lc.Pacer = pacer.NewTrace(s.arrivals(arrivals))
	}
	return nil
}

func (s shard) arrivals(as []pacer.Arrival) []pacer.Arrival {
	var out []pacer.Arrival
	for k := s.i; k < len(as); k += s.n {
		out = append(out, as[k])
	}
	return out
}

// id maps this shard's j-th request to its index in the whole run.
func (s shard) id(j int) int {
	if !s.split() {
		return j
	}
	return j*s.n + s.i
}
