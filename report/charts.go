package report

import (
	"fmt"
	"math"
	"strconv"

	"servebench/metrics"
)

// clipQ is the quantile at which histograms end their x axis, so that one stall does
// not squeeze the whole distribution against the left edge; the note under the title gives the
// maximum, and the tables the exact figures.
const clipQ = 0.999

// dist is one drawn distribution: its run (the colour), its tone, a label, whether dashed,
// and its sorted values (ms).
type dist struct {
	run    int
	tone   int
	label  string
	dashed bool
	vals   []float64
}

// msVals returns the reservoir's values sorted, in ms.
func msVals(r *reservoir) []float64 {
	v := r.sorted()
	for i := range v {
		v[i] /= 1e6
	}
	return v
}

// distRange returns the x axis of distribution charts, from lo (0, or the smallest value when
// one is negative, as in a hostile records file) to end (the largest clipQ quantile among ds),
// and the largest value. end > lo always: when every value is the same (events that share one
// timestamp, as a buffering proxy delivers them, give ITLs that are all 0) the axis is 1 ms
// wide, so that a histogram's bins have a width.
func distRange(ds []dist) (lo, end, maxV float64) {
	for _, d := range ds {
		if n := len(d.vals); n > 0 {
			lo = min(lo, d.vals[0])
			end = max(end, metrics.Quantile(d.vals, 100*clipQ))
			maxV = max(maxV, d.vals[n-1])
		}
	}
	if !(end > lo) { // also when a value is not finite
		end = lo + 1
	}
	return lo, end, maxV
}

// cdfPlot draws the empirical CDFs of ds, each at ≤ cdfPoints quantiles, on a log10 x axis
// from the smallest positive value to the largest: latencies are skewed (ITL gaps of a few ms
// beside stalls of hundreds), and on a linear axis the body of the distribution is a vertical
// line at the left edge. On a log axis the whole distribution, tail included, is drawn.
// Values of 0 or less (events that share a timestamp) have no logarithm: they are drawn at
// the left edge, and the note says how many.
func cdfPlot(id, title, xLabel string, ds []dist) *plot {
	maxV := 0.0
	for _, d := range ds {
		if n := len(d.vals); n > 0 {
			maxV = max(maxV, d.vals[n-1])
		}
	}
	lo, hi := logAxis(ds, maxV)
	floor := math.Pow(10, lo)
	p := &plot{id: id, title: title, xLabel: xLabel + ", log scale", yLabel: "fraction ≤ x", x0: lo, x1: hi, y1: 1,
		logX: true, note: fmt.Sprintf("log x axis to the maximum, %s ms", approx(maxV))}
	below := 0
	for _, d := range ds {
		n := min(len(d.vals), cdfPoints)
		var pts [][2]float64
		for k := range n {
			q := 1.0
			if n > 1 {
				q = float64(k) / float64(n-1)
			}
			x := metrics.Quantile(d.vals, 100*q)
			if math.IsNaN(x) || math.IsInf(x, 0) {
				continue // a hostile file's value; the tables say "—"
			}
			pts = append(pts, [2]float64{math.Log10(max(x, floor)), q})
		}
		for _, v := range d.vals {
			if !(v > 0) {
				below++
			}
		}
		p.marks = append(p.marks, mark{kind: markLine, run: d.run, dashed: d.dashed, tone: d.tone, label: label(d), pts: pts})
	}
	if below > 0 {
		p.note += fmt.Sprintf("; %d %s of 0 ms or less drawn at the left edge", below, cmpPlural(below, "value", "values"))
	}
	return p
}

func label(d dist) string {
	if len(d.vals) == 0 {
		return d.label + " (no data)"
	}
	return d.label
}

// scatterPlot draws per-request E2E against send time.
func scatterPlot(runs []Run) *plot {
	p := &plot{id: "e2e-scatter", title: "E2E latency per request against send time",
		xLabel: "send time (s since the first send)", yLabel: "E2E (ms)"}
	total := 0
	for i, r := range runs {
		pts := r.Series.scatter()
		total += r.Series.pointsSeen
		for _, pt := range pts {
			p.x1, p.y1 = max(p.x1, pt[0]), max(p.y1, pt[1]*1.05)
		}
		p.marks = append(p.marks, mark{kind: markDots, run: i, label: r.Label, pts: pts})
	}
	p.note = fmt.Sprintf("completed requests; %d drawn of %d", drawn(p), total)
	return p
}

func drawn(p *plot) int {
	n := 0
	for _, m := range p.marks {
		n += len(m.pts)
	}
	return n
}

// timePlot draws a figure of each run over time since its first send, per second of buckets
// whose width fits the longest run (bucketTicks).
func timePlot(id, title, yLabel, note string, runs []Run, values func(*Series) []float64) *plot {
	var span int64
	for _, r := range runs {
		span = max(span, r.Series.span())
	}
	w := bucketTicks(span)
	p := &plot{id: id, title: title, note: note + bucketNote(w), xLabel: "time (s since the first measured send)", yLabel: yLabel}
	for i, r := range runs {
		pts := r.Series.overTime(values(r.Series), w)
		for _, pt := range pts {
			p.x0, p.x1, p.y1 = min(p.x0, pt[0]), max(p.x1, pt[0]), max(p.y1, pt[1]*1.1)
		}
		p.marks = append(p.marks, mark{kind: markLine, run: i, label: r.Label, pts: pts})
	}
	if len(runs) == 1 {
		markWindow(p, runs[0].Series)
	}
	return p
}

// bucketNote says how a chart over time bucketed its figures.
func bucketNote(w int64) string {
	return fmt.Sprintf("; %s buckets (chosen from the run's length), a partial one at either end taken over the part the run covered (left out under a quarter)", widthWords(w))
}

// charts returns every chart of the report for runs (one, or base and candidate); a sweep's
// page has sweepCharts instead.
func charts(runs []Run) []*plot {
	var ttft, itl []dist
	for i, r := range runs {
		ttft = append(ttft, dist{run: i, label: r.Label, vals: msVals(&r.Series.ttft)})
		itl = append(itl,
			dist{run: i, label: r.Label + " chunk", vals: msVals(&r.Series.itlChunk)},
			dist{run: i, label: r.Label + " token", dashed: true, vals: msVals(&r.Series.itlToken)})
	}
	return []*plot{
		cdfPlot("ttft-cdf", "TTFT distribution (CDF)", "TTFT (ms)", ttft),
		logHistPlot("ttft-hist", "TTFT histogram", "TTFT (ms)", ttft),
		cdfPlot("itl-cdf", "ITL distributions (CDF): chunk solid, token dashed", "ITL (ms)", itl),
		logHistPlot("itl-hist", "ITL histograms: chunk solid, token dashed", "ITL (ms)", itl),
		timeline(runs, scatterPlot(runs)),
		timePlot("tokens-time", "Output tokens per second", "output tokens/s",
			"tokens of completed requests, warmup and cooldown included", runs, func(s *Series) []float64 { return s.tokens }),
		timePlot("inflight-time", "Requests in flight", "requests in flight",
			"mean in flight over each bucket (sent → done), warmup and cooldown included", runs, (*Series).inFlight),
	}
}

// approx prints a figure for a note with about three significant digits: 1234, 56.7, 0.123.
func approx(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return dash
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}
