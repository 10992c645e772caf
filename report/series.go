package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

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
	maxTicks   = 1 << 22 // ticks (4.8 days): a bogus timestamp cannot exhaust memory
	second     = int64(1e9)
	// tick is the time step a Series keeps its figures over time in; a chart groups ticks
	// into buckets whose width it chooses from the run's length (bucketTicks).
	tick = int64(100e6)
)

// Series collects, record by record, what the HTML charts need and nothing more: samples of
// TTFT and ITL (chunk and token), a sample of (send time, E2E) points, and output tokens and
// request-seconds in flight per 0.1 s tick since t0. Like metrics.Accumulator it keeps no record;
// its distributions count only measured requests (latencies of completed ones), but its
// figures over time count every request, warmup and cooldown too (tokens of completed ones,
// spans of every sent one), because they load the server: a chart that left them out read 0
// tokens/s while the server was busy with the warmup (window.go). The zero value is ready to use; it is not safe for concurrent use.
type Series struct {
	ttft, itlChunk, itlToken reservoir
	points                   [][2]float64 // (sent ns, E2E ns), a uniform sample
	pointsSeen               int
	firstSent                int64
	tokens                   []float64 // output tokens per tick
	flightFull, flightPart   []float64 // in flight: difference array of whole ticks, and parts of ticks (s)
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
		if b := e.T / tick; e.T >= 0 && b < maxTicks {
			s.tokens = grow(s.tokens, int(b))
			s.tokens[b] += float64(max(e.N, 1))
		}
	}
	if !known {
		return
	}
	for i := 1; i < len(ev); i++ {
		s.itlToken.addN(s.rng, float64(ev[i].T-ev[i-1].T)/float64(ev[i].N), int(ev[i].N), sampleCap)
	}
}

// addSpan adds a request in flight over [start, end) to the ticks: a fraction of a tick at
// each end, whole ticks in between through a difference array (O(1) per request).
func (s *Series) addSpan(start, end int64) {
	bs, be := start/tick, end/tick
	if start < 0 || end < start || be >= maxTicks {
		return
	}
	s.flightPart = grow(s.flightPart, int(be))
	s.flightFull = grow(s.flightFull, int(be)+1)
	if bs == be {
		s.flightPart[bs] += float64(end-start) / 1e9
		return
	}
	s.flightPart[bs] += float64((bs+1)*tick-start) / 1e9
	s.flightPart[be] += float64(end-be*tick) / 1e9
	s.flightFull[bs+1]++
	s.flightFull[be]--
}

// inFlight returns the request-seconds in flight in each tick since t0: over a bucket, their
// sum over its length is the mean number of requests in flight.
func (s *Series) inFlight() []float64 {
	out := make([]float64, len(s.flightPart))
	full := 0.0
	for i := range out {
		full += s.flightFull[i]
		out[i] = full*float64(tick)/1e9 + s.flightPart[i]
	}
	return out
}

// bucketWidths are the widths, in ticks, a chart over time may group its ticks into.
var bucketWidths = []int64{1, 2, 5, 10, 20, 50, 100, 300, 600, 1200, 3000, 6000, 18000, 36000}

// maxChartPoints is how many buckets a chart over time draws at most: 1 s buckets gave a
// 2.3 s run three points and a day 86,400.
const maxChartPoints = 150

// bucketTicks is the bucket width, in ticks, for a chart over runs that span up to span ns:
// the narrowest that draws at most maxChartPoints buckets.
func bucketTicks(span int64) int64 {
	for _, w := range bucketWidths {
		if span <= maxChartPoints*w*tick {
			return w
		}
	}
	return bucketWidths[len(bucketWidths)-1]
}

// span is the run's length, from its first send (warmup included) to its last done.
func (s *Series) span() int64 {
	if !s.win.seen {
		return 0
	}
	return s.win.end - s.win.first
}

// overTime returns (seconds since the first measured send, rate) points, one a bucket of w
// ticks from the run's first send (warmup included: its x is negative) to its last done: the
// bucket's sum of v over the part of it the run covered, in seconds, at that part's middle. A
// run's first and last buckets are partial, and a partial bucket counted as a whole one
// plunged at the end of every chart; one covered for under a quarter is left out (a few
// events over a sliver of time would read as a burst).
func (s *Series) overTime(v []float64, w int64) [][2]float64 {
	if !s.win.seen || w <= 0 {
		return nil
	}
	start, end := max(s.win.first, 0), s.win.end
	var pts [][2]float64
	for g := start / tick * tick; g < end; g += w * tick {
		lo, hi := max(g, start), min(g+w*tick, end)
		if 4*(hi-lo) < w*tick {
			continue
		}
		sum := 0.0
		for b := g / tick; b < g/tick+w && b < int64(len(v)); b++ {
			sum += v[b]
		}
		x := float64((lo+hi)/2-s.firstSent) / 1e9
		pts = append(pts, [2]float64{x, sum / (float64(hi-lo) / 1e9)})
	}
	return pts
}

// widthWords is a bucket width in words: "0.1 s", "1 s", "5 min".
func widthWords(w int64) string {
	d := w * tick
	if d >= 60*second && d%(60*second) == 0 {
		return fmt.Sprintf("%d min", d/(60*second))
	}
	return strconv.FormatFloat(float64(d)/1e9, 'g', -1, 64) + " s"
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

// addN adds v n times. An event of many tokens is one value per token; up to
// exactN of them go one by one (every event a real server sends). Past that, the sample fills
// one by one, then each further copy would replace a random slot with probability cap/seen, so
// the expected number of replacements, cap·ln(seen after / seen before), is made in random
// slots: a hostile file's event of 2^31 − 1 tokens (the most an event counts) costs about
// 10·cap draws, not two billion (a 4.6 kB file of large events took 3 s to draw, and hung
// the HTML format's fuzzing beside busy loops).
func (r *reservoir) addN(rng *rand.Rand, v float64, n, cap int) {
	if n <= exactN {
		for range n {
			r.add(rng, v, cap)
		}
		return
	}
	for ; n > 0 && len(r.vals) < cap; n-- {
		r.add(rng, v, cap)
	}
	if n == 0 || cap == 0 {
		return
	}
	from := float64(r.seen)
	r.seen += min(n, math.MaxInt-r.seen)
	for range int(math.Round(float64(cap) * math.Log(float64(r.seen)/from))) {
		r.vals[rng.IntN(cap)] = v
	}
}

// exactN is the most copies addN adds one by one.
const exactN = 64

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
