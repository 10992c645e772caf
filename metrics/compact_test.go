package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"servebench/record"
)

// The Accumulator keeps ITL gaps as uint32 lists (itlSample) and peak tokens as a
// per-millisecond histogram (tokenHist). These tests check them against the plain
// implementation they replaced: one float64 per value, sorted (sample.stat), and every
// event's exact time for the peak.

// randomGap draws gaps that exercise every path of itlSample: ties (whole milliseconds,
// which also tie across token counts: 30 ms / 3 = 10 ms), odd nanoseconds, the uint32 edge,
// gaps over 4.29 s, and the negative gaps of a malformed record.
func randomGap(rng *rand.Rand) int64 {
	switch rng.IntN(12) {
	case 0:
		return 0
	case 1:
		return 4_200_000_000 + rng.Int64N(200_000_000) // around 2^32 ns
	case 2:
		return math.MaxUint32 + rng.Int64N(3) - 1
	case 3:
		return -rng.Int64N(2_000_000) // malformed: an event earlier than the one before
	case 4, 5, 6:
		return rng.Int64N(60) * ms
	default:
		return rng.Int64N(50 * ms)
	}
}

// randomCount draws an event's token count in the request's mode.
func randomCount(rng *rand.Rand, mode int) int32 {
	switch mode {
	case 0:
		return 1
	case 1:
		return 1 + rng.Int32N(5)
	case 2: // some counts unknown: no ITL (token) for the request
		return rng.Int32N(3)
	default: // now and then a count too large for a list of its own
		if rng.IntN(4) == 0 {
			return 60 + rng.Int32N(20)
		}
		return 1 + rng.Int32N(3)
	}
}

// randomRecords returns up to 300 requests (mostly fewer, so that many runs have no event in
// a boundary millisecond of the peak) over ~20 s, some warmup, some failed.
func randomRecords(rng *rand.Rand) []record.Record {
	recs := make([]record.Record, 1+rng.IntN(1+rng.IntN(300)))
	for i := range recs {
		r := &recs[i]
		sent := 1 + rng.Int64N(20*sec)
		*r = record.Record{Phase: record.PhaseMeasure, Scheduled: sent - 100, Dispatched: sent - 50, Sent: sent}
		switch rng.IntN(20) {
		case 0:
			r.Phase = record.PhaseWarmup
		case 1:
			r.ErrorClass = "timeout"
		}
		mode, t := rng.IntN(4), sent+rng.Int64N(sec)
		for j := range rng.IntN(30) {
			if j > 0 {
				t += randomGap(rng)
			}
			r.Events = append(r.Events, record.Event{T: t, N: randomCount(rng, mode)})
		}
		r.Done = max(t, sent) + rng.Int64N(ms)
	}
	return recs
}

// oracleITL computes both ITL distributions as the float64 implementation did.
func oracleITL(recs []record.Record, ps []float64) (chunk, token Stat) {
	var c, tk sample
	for i := range recs {
		r := &recs[i]
		if !r.Measured() || !r.OK() || len(r.Events) < 2 {
			continue
		}
		known := true
		for _, e := range r.Events {
			known = known && e.N > 0
		}
		for j := 1; j < len(r.Events); j++ {
			gap := r.Events[j].T - r.Events[j-1].T
			c.add(float64(gap))
			for range r.Events[j].N * int32(btoi(known)) {
				tk.add(float64(gap) / float64(r.Events[j].N))
			}
		}
	}
	return c.stat(ps), tk.stat(ps)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// oraclePeak computes peak tokens/s from every event's time, bucketed from start with
// bucket width `second` and events in [start, end]; unknown counts as one token. With times
// in ns it is the exact peak of the float64-era implementation; with times in whole ms it
// is the rule tokenHist.peak documents.
func oraclePeak(recs []record.Record, start, end, second int64, scale func(int64) int64) int64 {
	buckets := make([]int64, (scale(end)-scale(start))/second+1)
	// the last whole second stands in for a partial last bucket
	span := scale(end) - scale(start) + 1
	tail, hasTail := int64(0), span > second && span%second != 0
	for i := range recs {
		r := &recs[i]
		if !r.Measured() || !r.OK() {
			continue
		}
		for _, e := range r.Events {
			if t := scale(e.T); t >= scale(start) && t <= scale(end) {
				buckets[(t-scale(start))/second] += int64(max(e.N, 1))
				if hasTail && t > scale(end)-second {
					tail += int64(max(e.N, 1))
				}
			}
		}
	}
	return max(0, maxOf(buckets), tail)
}

func maxOf(v []int64) int64 {
	m := int64(math.MinInt64)
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// boundaryEvent reports whether any event of a completed measured request sits in the first
// millisecond of a 1 s bucket, of the last whole second, or in the window end's millisecond,
// where placing events to the millisecond may move it.
func boundaryEvent(recs []record.Record, start, end int64) bool {
	m0, m1 := floorDiv(start, 1e6), floorDiv(end, 1e6)
	for i := range recs {
		if r := &recs[i]; r.Measured() && r.OK() {
			for _, e := range r.Events {
				m := floorDiv(e.T, 1e6)
				if d := m - m0; d >= 0 && d%1000 == 0 || m == m1 || m == m1-999 {
					return true
				}
			}
		}
	}
	return false
}

func TestCompactMatchesFloat64(t *testing.T) {
	if raceEnabled {
		t.Skip("run without the race detector (scripts/test's second pass): one goroutine, many times the time under it")
	}
	ps := []float64{0, 1, 25, 50, 90, 99, 99.9, 100}
	exactPeaks := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		recs := randomRecords(rng)
		a := NewAccumulator(Options{Percentiles: ps})
		for i := range recs {
			a.Add(&recs[i])
		}
		s := a.Summary()
		chunk, token := oracleITL(recs, ps)
		checkSame(t, seed, "ITL (chunk)", s.ITLChunk, chunk)
		checkSame(t, seed, "ITL (token)", s.ITLToken, token)
		if s.PeakOutputTokensPerS == nil {
			continue
		}
		got, start, end := *s.PeakOutputTokensPerS, s.WindowStart, s.WindowEnd
		toMS := func(t int64) int64 { return floorDiv(t, 1e6) }
		if want := oraclePeak(recs, start, end, 1000, toMS); got != want {
			t.Errorf("seed %d: peak %d, want %d by the millisecond rule", seed, got, want)
		}
		if boundaryEvent(recs, start, end) {
			continue
		}
		exactPeaks++
		ns := func(t int64) int64 { return t }
		if want := oraclePeak(recs, start, end, sec, ns); got != want {
			t.Errorf("seed %d: peak %d, want the exact %d (no event in a boundary ms)", seed, got, want)
		}
	}
	if exactPeaks < 60 {
		t.Errorf("only %d of 300 runs without a boundary event: the exact check is too weak", exactPeaks)
	}
}

// checkSame compares two Stats to the last bit (%v prints the shortest representation that
// reads back as the same float64).
func checkSame(t *testing.T, seed uint64, name string, got, want Stat) {
	t.Helper()
	if g, w := fmt.Sprintf("%v", got), fmt.Sprintf("%v", want); g != w {
		t.Errorf("seed %d: %s\n got %s\nwant %s", seed, name, g, w)
	}
}

// TestCompactSummaryRepeats checks that Summary, which sorts the lists in place, may be
// called again after more Adds.
func TestCompactSummaryRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := randomRecords(rng)
	var a Accumulator
	for i := range recs {
		a.Add(&recs[i])
		if i%17 == 0 {
			_ = a.Summary()
		}
	}
	chunk, token := oracleITL(recs, DefaultPercentiles)
	s := a.Summary()
	checkSame(t, 0, "ITL (chunk)", s.ITLChunk, chunk)
	checkSame(t, 0, "ITL (token)", s.ITLToken, token)
}

// TestPeakMillisecondRule pins the one case where events placed to the millisecond differ
// from exact times, and the extreme times that must not panic or allocate their span.
func TestPeakMillisecondRule(t *testing.T) {
	var h tokenHist
	start := 1*sec + ms/2    // the window starts half-way through a millisecond
	h.add(start+sec-ms/4, 3) // exact: bucket 0; in bucket 1's first ms, before the start's offset
	h.add(start+sec+ms/4, 2) // bucket 1 either way
	h.add(start+10*ms, 1)    // bucket 0
	if p, ok := h.peak(start, start+3*sec); !ok || p != 5 {
		t.Errorf("peak = %d %v, want 5 (3 + 2 in bucket 1 by the millisecond rule; exact 4)", p, ok)
	}
	h.add(math.MinInt64, 7)
	h.add(math.MaxInt64, math.MaxInt32)
	h.add(math.MaxInt64, math.MaxInt32)
	h.add(math.MaxInt64, math.MaxInt32) // over 2^32 tokens in one ms: kept exactly
	if len(h.blocks) != 4 || h.unknown != 0 {
		t.Errorf("blocks = %d, unknown = %d, want 4 and 0", len(h.blocks), h.unknown)
	}
	if p, ok := h.peak(math.MinInt64, math.MaxInt64); !ok || p != 3*math.MaxInt32 {
		t.Errorf("peak over all time = %d, want %d", p, 3*int64(math.MaxInt32))
	}
}

// A window that is not whole seconds has a partial last bucket, whose count is a fraction
// of a second's: its last whole second stands in for it, so that a run whose tokens crowd
// into its end has a peak at or above its mean rate.
func TestPeakLastWholeSecond(t *testing.T) {
	var h tokenHist
	// 2.3 s: 700 tokens a second for 2 s, then 300 tokens in the last 0.3 s (1,000 a second)
	for i := range int64(2000) {
		if i%10 == 0 {
			h.add(i*ms, 7)
		}
	}
	for i := range int64(300) {
		h.add((2000+i)*ms, 1)
	}
	end := 2300*ms - 1
	p, ok := h.peak(0, end)
	mean := float64(1700) / 2.3
	if !ok || p != 300+490 || float64(p) < mean {
		t.Errorf("peak = %d %v, want 790 (the last whole second: 300 + 0.7 s × 700), not below the mean %.0f", p, ok, mean)
	}
	// whole seconds: no extra bucket
	if p, ok := h.peak(0, 2000*ms-1); !ok || p != 700 {
		t.Errorf("peak over 2 whole seconds = %d %v, want 700", p, ok)
	}
}
