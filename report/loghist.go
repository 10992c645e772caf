package report

import (
	"fmt"
	"math"
)

// Latency distributions are skewed: a stall of a second beside gaps of 10 ms put about 95% of
// an ITL histogram in the first of 40 linear bins. The histograms are therefore drawn on a
// log10 axis: bins of equal ratio from the smallest positive value to the clip quantile, so
// the body and the tail are both visible. A value of 0 (events that share a timestamp) has no
// logarithm; it is counted in the first bin, and the note says how many.

// minLogSpan is the narrowest log axis, a factor of 2, so that bins have a width when every
// value is nearly the same.
const minLogSpan = 0.3

// logAxis is the log10 x axis [lo, hi] of ds up to end: from the smallest positive value
// (end/2 when there is none below end), at least minLogSpan wide; end is 1 when it is not a
// positive number.
func logAxis(ds []dist, end float64) (lo, hi float64) {
	floor := math.Inf(1)
	for _, d := range ds {
		for _, v := range d.vals { // sorted: the first positive value is the smallest
			if v > 0 {
				floor = math.Min(floor, v)
				break
			}
		}
	}
	if !(end > 0) || math.IsInf(end, 0) {
		end = 1
	}
	if !(floor < end) {
		floor = end / 2
	}
	hi = math.Log10(end)
	return math.Min(math.Log10(floor), hi-minLogSpan), hi
}

// logHistPlot draws histograms of ds over histBins log-spaced bins, as the fraction of each
// distribution's values per bin.
func logHistPlot(id, title, xLabel string, ds []dist) *plot {
	_, end, maxV := distRange(ds)
	lo, hi := logAxis(ds, end)
	p := &plot{id: id, title: title, xLabel: xLabel + ", log scale", yLabel: "fraction of values", x0: lo, x1: hi, logX: true}
	width := (hi - lo) / histBins
	over, zero := 0, 0
	for _, d := range ds {
		counts := make([]float64, histBins)
		for _, v := range d.vals {
			switch {
			case !(v <= end):
				over++
				continue
			case v <= 0:
				zero++
				counts[0]++
				continue
			}
			counts[max(0, min(int((math.Log10(v)-lo)/width), histBins-1))]++
		}
		var pts [][2]float64
		for i, c := range counts {
			f := c / float64(max(len(d.vals), 1))
			pts = append(pts, [2]float64{lo + float64(i)*width, f}, [2]float64{lo + float64(i+1)*width, f})
			p.y1 = max(p.y1, f*1.1)
		}
		if len(d.vals) == 0 {
			pts = nil
		}
		p.marks = append(p.marks, mark{kind: markArea, run: d.run, dashed: d.dashed, label: label(d), pts: pts})
	}
	p.note = fmt.Sprintf("%d bins, each ×%s wide, on a log axis; %d %s above p%g left out (max %s ms)",
		histBins, approx(math.Pow(10, width)), over, cmpPlural(over, "value", "values"), 100*clipQ, approx(maxV))
	if zero > 0 {
		p.note += fmt.Sprintf("; %d %s of 0 ms counted in the first bin", zero, cmpPlural(zero, "value", "values"))
	}
	return p
}

// logTicks returns tick positions on a log10 axis [lo, hi]: 1, 2 and 5 × 10^k, thinned to
// decades when there would be more than ticks+3 of them.
func logTicks(lo, hi float64) []float64 {
	var out, decades []float64
	for k := math.Floor(lo); k <= math.Ceil(hi); k++ {
		for _, m := range []float64{1, 2, 5} {
			if x := k + math.Log10(m); x >= lo-1e-9 && x <= hi+1e-9 {
				out = append(out, x)
				if m == 1 {
					decades = append(decades, x)
				}
			}
		}
	}
	if len(out) > ticks+3 && len(decades) >= 2 {
		return decades
	}
	return out
}
