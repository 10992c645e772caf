package metrics

import (
	"fmt"
	"time"

	"servebench/record"
)

// Bounds of the shards' start skew (see shardAcc), as shares of the measurement window. Up
// to skewDistorts the merged figures stand; beyond it, for a skew's length at the start (and
// as long at the end) not every shard was sending, so the figures mix a lighter load with the
// one asked for; beyond skewInvalidates that was a quarter of the window or more at each end,
// half of it in all, and the merged run is INVALID: no conclusion rests on it.
const (
	skewDistorts    = 0.05
	skewInvalidates = 0.25
)

// shardAcc keeps each shard's first send of a merged split run (record.Merge has put every
// shard on the earliest shard's clock through the wall-clock starts in their headers, so the
// times compare across machines as well as their clocks agree). Warmup requests count: they
// load the server as measured ones do, so a shard still warming is sending its share. (Its
// first measured send would not do: the measured phase starts after a count of random
// arrivals, so shards started together differ there by about √warmup/rate, 0.3 s for one
// second of warmup at 20 req/s a shard, while their load was the same from the start.)
type shardAcc struct {
	first map[int]int64 // shard index → earliest Sent of its requests, ns since t0
}

func (s *shardAcc) add(r *record.Record) {
	if r.Sent == 0 { // never sent: a connection that failed
		return
	}
	if s.first == nil {
		s.first = map[int]int64{}
	}
	if t, ok := s.first[r.Shard]; !ok || r.Sent < t {
		s.first[r.Shard] = r.Sent
	}
}

// skew is the number of shards that sent a request and the spread of their first sends: the
// latest shard's first send − the earliest's. Zero for an unsplit run.
func (s *shardAcc) skew() (int, time.Duration) {
	if len(s.first) < 2 {
		return len(s.first), 0
	}
	lo, hi := int64(1<<63-1), int64(-1<<63)
	for _, t := range s.first {
		lo, hi = min(lo, t), max(hi, t)
	}
	return len(s.first), time.Duration(hi - lo)
}

// shardWarnings report the start skew of a merged split run: always (info), as a distortion
// past skewDistorts of the window, as invalidating past skewInvalidates.
func shardWarnings(s *Summary) []Warning {
	if s.Shards < 2 {
		return nil
	}
	share := 0.0
	if s.Window > 0 {
		share = float64(s.ShardStartSkew) / float64(s.Window)
	}
	what := fmt.Sprintf("shards' start skew %s: the %d shards' first sends were that far apart (wall clock), %.1f%% of the %s measurement window",
		fmtSkew(s.ShardStartSkew), s.Shards, 100*share, fmtSkew(s.Window))
	const action = "give every shard the same --start-at TIME (deploy/kubernetes/job.yaml passes one)"
	switch {
	case share > skewInvalidates:
		return []Warning{warn(Invalidates, action, "%s: for a quarter of it or more at each end not every shard was sending, so the merged figures are not the load asked for", what)}
	case share > skewDistorts:
		return []Warning{warn(Distorts, action, "%s: for that long at each end not every shard was sending, so the merged figures mix a lighter load with the one asked for", what)}
	}
	return []Warning{warn(Info, "", "%s (within %.0f%%)", what, 100*skewDistorts)}
}

// fmtSkew is a duration in milliseconds below 1 s, else in seconds.
func fmtSkew(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}
