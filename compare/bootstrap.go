package compare

import (
	"math"
	"math/rand/v2"
	"slices"

	"servebench/metrics"
)

// block is the requests of one time window of one run: the unit the bootstrap resamples.
type block struct {
	reqs    []*obs
	seconds float64
}

// blocksPerRun chooses how many time windows a run of n requests is cut into: about eight
// requests per window, at least 2 and at most 20. Fewer, longer blocks keep more of the
// correlation between neighbouring requests; more blocks give the resampling more to draw from.
func blocksPerRun(n int) int { return min(max(n/8, 2), 20) }

// blocks cuts every run into equal time windows of its measurement window (first sent to last
// end), each request going to the window in which it was sent.
func (s *Side) blocks() []block {
	var out []block
	for _, r := range s.Runs() {
		reqs := s.reqs[r.Run]
		if len(reqs) == 0 {
			continue
		}
		start, end := reqs[0].sent, reqs[0].end
		for _, o := range reqs {
			start, end = min(start, o.sent), max(end, o.end)
		}
		k := blocksPerRun(len(reqs))
		width := float64(end-start) / float64(k)
		bs := make([]block, k)
		for i := range bs {
			bs[i].seconds = width / 1e9
		}
		for i := range reqs {
			j := min(int(float64(reqs[i].sent-start)/width), k-1)
			if width <= 0 {
				j = 0
			}
			bs[j].reqs = append(bs[j].reqs, &reqs[i])
		}
		out = append(out, bs...)
	}
	return out
}

// pool evaluates m on the union of blocks.
func pool(m Metric, bs []block) (float64, bool) {
	var reqs []*obs
	var sec float64
	for _, b := range bs {
		reqs = append(reqs, b.reqs...)
		sec += b.seconds
	}
	return m.fromBlocks(reqs, sec)
}

// resample draws len(bs) blocks with replacement.
func resample(rng *rand.Rand, bs []block, buf []block) []block {
	buf = buf[:0]
	for range bs {
		buf = append(buf, bs[rng.IntN(len(bs))])
	}
	return buf
}

// bootstrapRow compares one metric by block bootstrap: each of B rounds resamples both sides'
// blocks independently and records cand/base − 1. The 95% interval of the delta is the 2.5th
// to 97.5th percentile of those; p is twice the share of rounds on the far side of zero (a
// percentile-bootstrap p-value). Each side's interval comes from the same rounds.
func bootstrapRow(m Metric, base, cand []block, rounds int, seed uint64) (Row, bool) {
	b0, ok1 := pool(m, base)
	c0, ok2 := pool(m, cand)
	if !ok1 || !ok2 || b0 == 0 {
		return Row{}, false
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var bb, cb, deltas []float64
	var buf []block
	for range rounds {
		bv, ok1 := pool(m, resample(rng, base, buf))
		cv, ok2 := pool(m, resample(rng, cand, buf))
		if !ok1 || !ok2 || bv == 0 {
			continue
		}
		bb, cb, deltas = append(bb, bv), append(cb, cv), append(deltas, cv/bv-1)
	}
	if len(deltas) < rounds/2 {
		return Row{}, false
	}
	below, above := 0, 0
	for _, d := range deltas {
		if d <= 0 {
			below++
		}
		if d >= 0 {
			above++
		}
	}
	p := math.Min(1, 2*float64(min(below, above))/float64(len(deltas)))
	slices.Sort(deltas)
	r := Row{Base: ci(b0, bb, len(base)), Cand: ci(c0, cb, len(cand)), Delta: c0/b0 - 1, P: p,
		DeltaLo: metrics.Quantile(deltas, 2.5), DeltaHi: metrics.Quantile(deltas, 97.5)}
	r.Significant = r.DeltaLo > 0 || r.DeltaHi < 0
	return r, true
}

// ci is a side's estimate: its pooled value and the 2.5th to 97.5th percentile of its
// bootstrap rounds (sorted here, in place).
func ci(center float64, rounds []float64, n int) Estimate {
	slices.Sort(rounds)
	return Estimate{Center: center, Lo: metrics.Quantile(rounds, 2.5), Hi: metrics.Quantile(rounds, 97.5), N: n}
}
