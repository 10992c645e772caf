package report

import (
	"math/rand/v2"
	"slices"

	"servebench/metrics"
	"servebench/record"
)

// Caps on what a Series keeps. Distribution charts need a few hundred quantiles, a scatter a
// few thousand dots: beyond the caps a Series keeps a uniform random sample (a reservoir with
// a fixed seed, so the same file always draws the same picture). The summary table's figures
// are exact; only the pictures are drawn from samples on very large runs.
const (
	sampleCap  = 200_000 // distribution values (TTFT, ITL) kept per distribution
	scatterCap = 3_000   // (send time, E2E) points kept
	cdfPoints  = 500     // points of a drawn CDF
	maxBuckets = 1 << 20 // 1 s buckets (12 days): a bogus timestamp cannot exhaust memory
	second     = int64(1e9)
)

// Series collects, record by record, what the HTML charts need and nothing more: samples of
// TTFT and ITL (chunk and token), a sample of (send time, E2E) points, and output tokens and
// requests in flight per 1 s bucket since t0. Like metrics.Accumulator it keeps no record;
// its distributions count only measured requests (latencies of completed ones), but its
// figures over time count every request, warmup and cooldown too (tokens of completed ones,
// spans of every sent one), because they load the server: a chart that left them out read 0
// tokens/s while the server was busy with the warmup (window.go). The zero value is ready to use; it is not safe for concurrent use.
type Series struct {
	ttft, itlChunk, itlToken reservoir
	points                   [][2]float64 // (sent ns, E2E ns), a uniform sample
	pointsSeen               int
	firstSent                int64
	tokens                   []float64 // output tokens per bucket
	flightFull, flightPart   []float64 // in-flight: difference array of whole buckets, and partial ones
	rng                      *rand.Rand
	win                      windowSpan // window.go: the whole run against its measurement window
	lanes                    *laneSet   // swimlane.go: the last run's requests, for the swim-lane chart
}

// Add adds one record.
func (s *Series) Add(r *record.Record) {
	if s.rng == nil {
		s.rng = rand.New(rand.NewPCG(1, 2))
	}
	s.lanes = s.lanes.add(r)
	if sent, end, ok := metrics.Span(r); ok {
		s.noteSpan(sent, end, r.Measured())
		s.addSpan(sent, end) // every request loads the server: warmup and cooldown too
	}
	if !r.OK() {
		return
	}
	if !r.Measured() {
		s.addTokens(r.Events) // load over time, never statistics (window.go)
		return
	}
	m := metrics.PerRequest(r)
	if m.TTFT.OK {
		s.ttft.add(s.rng, m.TTFT.V, sampleCap)
	}
	if m.E2E.OK {
		p := [2]float64{float64(r.Sent), m.E2E.V}
		switch j := slot(s.rng, &s.pointsSeen, len(s.points), scatterCap); {
		case j == len(s.points):
			s.points = append(s.points, p)
		case j >= 0:
			s.points[j] = p
		}
	}
	s.addEvents(r.Events)
}

// addEvents adds ITL values by the rules of metrics (ITL (token) only when every event's
// count is known) and the events' tokens to their buckets (an unknown count is one token,
// as in the peak).
func (s *Series) addEvents(ev []record.Event) {
	known := len(ev) > 0
	for i, e := range ev {
		known = known && e.N > 0
		if i > 0 {
			s.itlChunk.add(s.rng, float64(e.T-ev[i-1].T), sampleCap)
		}
		if b := e.T / second; e.T >= 0 && b < maxBuckets {
			s.tokens = grow(s.tokens, int(b))
			s.tokens[b] += float64(max(e.N, 1))
		}
	}
	if !known {
		return
	}
	for i := 1; i < len(ev); i++ {
		v := float64(ev[i].T-ev[i-1].T) / float64(ev[i].N)
		for range ev[i].N {
			s.itlToken.add(s.rng, v, sampleCap)
		}
	}
}

// addSpan adds a request in flight over [start, end) to the buckets: a fraction of a bucket
// at each end, whole buckets in between through a difference array (O(1) per request).
func (s *Series) addSpan(start, end int64) {
	bs, be := start/second, end/second
	if start < 0 || end < start || be >= maxBuckets {
		return
	}
	s.flightPart = grow(s.flightPart, int(be))
	s.flightFull = grow(s.flightFull, int(be)+1)
	if bs == be {
		s.flightPart[bs] += float64(end-start) / float64(second)
		return
	}
	s.flightPart[bs] += float64((bs+1)*second-start) / float64(second)
	s.flightPart[be] += float64(end-be*second) / float64(second)
	s.flightFull[bs+1]++
	s.flightFull[be]--
}

// inFlight returns the mean number of requests in flight in each 1 s bucket since t0.
func (s *Series) inFlight() []float64 {
	out := make([]float64, len(s.flightPart))
	full := 0.0
	for i := range out {
		full += s.flightFull[i]
		out[i] = full + s.flightPart[i]
	}
	return out
}

// overTime returns (seconds since the first measured send, value) points of per-bucket
// values, each at the middle of its bucket, from the bucket of the run's first send on
// (warmup included: its x is negative).
func (s *Series) overTime(v []float64) [][2]float64 {
	first := s.win.first / second
	var pts [][2]float64
	for b := max(first, 0); b < int64(len(v)); b++ {
		x := float64(b*second+second/2-s.firstSent) / 1e9
		pts = append(pts, [2]float64{x, v[b]})
	}
	return pts
}

// scatter returns (seconds since the first send, E2E ms) points.
func (s *Series) scatter() [][2]float64 {
	pts := make([][2]float64, len(s.points))
	for i, p := range s.points {
		pts[i] = [2]float64{(p[0] - float64(s.firstSent)) / 1e9, p[1] / 1e6}
	}
	return pts
}

func grow(v []float64, i int) []float64 {
	if i < len(v) {
		return v
	}
	return append(v, make([]float64, i+1-len(v))...)
}

// reservoir keeps every value up to its cap, then a uniform sample of all values seen
// (Vitter's algorithm R).
type reservoir struct {
	vals []float64
	seen int
}

func (r *reservoir) add(rng *rand.Rand, v float64, cap int) {
	switch j := slot(rng, &r.seen, len(r.vals), cap); {
	case j == len(r.vals):
		r.vals = append(r.vals, v)
	case j >= 0:
		r.vals[j] = v
	}
}

// slot counts one more value seen and returns the index it goes to in a sample of n ≤ cap
// values: n (append) while the sample is not full, then a random slot, or −1 when not kept.
func slot(rng *rand.Rand, seen *int, n, cap int) int {
	*seen++
	if n < cap {
		return n
	}
	if j := rng.IntN(*seen); j < cap {
		return j
	}
	return -1
}

// sorted returns a sorted copy of the kept values: drawing never changes a Series, so one
// Series may be rendered by several goroutines.
func (r *reservoir) sorted() []float64 {
	v := slices.Clone(r.vals)
	slices.Sort(v)
	return v
}
