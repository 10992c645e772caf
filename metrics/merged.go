package metrics

import (
	"cmp"
	"math"
	"slices"
)

// weighted is a value that occurs w times in a distribution.
type weighted struct {
	v float64
	w uint32
}

// cursor walks one sorted run of a distribution kept in parts: either u, gaps whose values
// are float64(g)/div, each occurring w times, or f, explicit (value, multiplicity) pairs.
type cursor struct {
	u   []uint32
	div float64
	w   uint32
	f   []weighted

	i  int     // position of the head
	v  float64 // head value
	hw uint32  // head multiplicity
}

// wideCursor sorts pairs by value and returns them as a run.
func wideCursor(f []weighted) cursor {
	slices.SortFunc(f, func(a, b weighted) int { return cmp.Compare(a.v, b.v) })
	return cursor{f: f}
}

func (c *cursor) len() int { return len(c.u) + len(c.f) } // one of u, f is empty

// weight is how many values the run holds.
func (c *cursor) weight() int {
	n := len(c.u) * int(c.w)
	for _, e := range c.f {
		n += int(e.w)
	}
	return n
}

// load reads the head at position i.
func (c *cursor) load() {
	if c.i < len(c.u) {
		c.v, c.hw = float64(c.u[c.i])/c.div, c.w
		return
	}
	e := c.f[c.i]
	c.v, c.hw = e.v, e.w
}

// merge calls f with every value of the runs in ascending order, with its multiplicity,
// by a binary min-heap of the runs' heads: O(log runs) per value and no copy of the values.
func merge(runs []cursor, f func(v float64, w uint32)) {
	h := make([]cursor, 0, len(runs))
	for _, c := range runs {
		if c.len() > 0 {
			c.i = 0
			c.load()
			h = append(h, c)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for len(h) > 0 {
		c := &h[0]
		f(c.v, c.hw)
		if c.i++; c.i < c.len() {
			c.load()
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		siftDown(h, 0)
	}
}

// siftDown restores the heap order below position i.
func siftDown(h []cursor, i int) {
	for {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].v < h[m].v {
			m = l
		}
		if r < len(h) && h[r].v < h[m].v {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// mergedStat describes the distribution held in sorted runs exactly as sample.stat
// describes the same values in one sorted float64 slice: the sums run over the values in
// ascending order (so the mean is the same to the last bit), the std is two-pass, and the
// percentiles are type 7 over the merged order, read at the ranks they need during the first
// pass instead of from a merged slice.
func mergedStat(runs []cursor, ps []float64) Stat {
	n := 0
	for i := range runs {
		n += runs[i].weight()
	}
	if n == 0 {
		return Stat{}
	}
	ranks := neededRanks(n, ps)
	vals := make([]float64, len(ranks))
	var sum float64
	seen, j := 0, 0
	merge(runs, func(v float64, w uint32) {
		for range w {
			sum += v
		}
		seen += int(w)
		for ; j < len(ranks) && ranks[j] < seen; j++ {
			vals[j] = v
		}
	})
	mean := sum / float64(n)
	var ss float64 // two-pass, as sample.stat
	merge(runs, func(v float64, w uint32) {
		d := v - mean
		for range w {
			ss += d * d
		}
	})
	at := func(i int) float64 {
		k, _ := slices.BinarySearch(ranks, i)
		return vals[k]
	}
	st := Stat{N: n, Mean: mean, Std: math.Sqrt(ss / float64(n)), Min: at(0), Max: at(n - 1)}
	st.Median = quantileAt(n, 50, at)
	st.Percentiles = make([]Percentile, len(ps))
	for i, p := range ps {
		st.Percentiles[i] = Percentile{P: p, V: quantileAt(n, p, at)}
	}
	return st
}

// neededRanks returns, sorted and without repeats, the 0-based ranks whose values the min,
// max, median and percentiles ps of n values read. It asks quantileAt itself, so the ranks
// cannot drift from the interpolation rule.
func neededRanks(n int, ps []float64) []int {
	ranks := []int{0, n - 1}
	record := func(i int) float64 {
		ranks = append(ranks, i)
		return 0
	}
	quantileAt(n, 50, record)
	for _, p := range ps {
		quantileAt(n, p, record)
	}
	slices.Sort(ranks)
	return slices.Compact(ranks)
}
