package compare

import (
	"math"
	"math/rand/v2"

	"servebench/stat"
)

// block is the requests of one time window of one run: the unit the within-run bootstrap
// resamples.
type block struct {
	reqs    []*obs
	seconds float64
}

// blocksPerRun chooses how many time windows a run of n requests is cut into: about eight
// requests per window, at least 2 and at most 20. Fewer, longer blocks keep more of the
// correlation between neighbouring requests; more blocks give the resampling more to draw from.
func blocksPerRun(n int) int { return min(max(n/8, 2), 20) }

// runBlocks cuts one run into equal time windows of its measurement window (first sent to
// last end), each request going to the window in which it was sent.
func runBlocks(reqs []obs) []block {
	if len(reqs) == 0 {
		return nil
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
		j := 0
		if width > 0 {
			j = min(int(float64(reqs[i].sent-start)/width), k-1)
		}
		bs[j].reqs = append(bs[j].reqs, &reqs[i])
	}
	return bs
}

// minBlocks is the fewest time windows from which a run's own sampling noise is estimated.
const minBlocks = 8

// pool evaluates m on the union of blocks.
func pool(m Metric, bs []block) (float64, bool) {
	n := 0
	for _, b := range bs {
		n += len(b.reqs)
	}
	reqs := make([]*obs, 0, n)
	var sec float64
	for _, b := range bs {
		reqs = append(reqs, b.reqs...)
		sec += b.seconds
	}
	return m.fromBlocks(reqs, sec)
}

// withinVar is the sampling variance of log(m) inside one run, by a block bootstrap of the
// run's time windows (stat.BlockVar); 0 when it cannot be told (too few windows or values).
// A run of fewer than minBlocks windows (64 requests) gives none: resampling two or three
// windows, one of them the run's ramp-in or drain, measures the edges, not the noise.
func withinVar(m Metric, bs []block, rounds int, rng *rand.Rand) float64 {
	if len(bs) < minBlocks {
		return 0
	}
	buf := make([]block, 0, len(bs))
	v, ok := stat.BlockVar(len(bs), func(pick []int) (float64, bool) {
		buf = buf[:0]
		for _, i := range pick {
			buf = append(buf, bs[i])
		}
		x, ok := pool(m, buf)
		if !ok || x <= 0 {
			return 0, false
		}
		return math.Log(x), true
	}, rounds, rng)
	if !ok {
		return 0
	}
	return v
}
