package report

import (
	"cmp"
	"fmt"
	"slices"

	"servebench/metrics"
)

// A sweep's page draws curves per point, never pooled: one dot per point, joined in order of
// offered load, for TTFT and TPOT (p50 solid, p99 dashed), request throughput, output tokens
// per second per user against output tokens per second (the curve vLLM and AIPerf draw), and
// with SLOs goodput and attainment. The x axis is the load the point offered, not the
// throughput it achieved: past saturation throughput stops growing, and a curve drawn against
// it folds back on itself where the overloaded points land left of the lighter ones.

// curvePoint is one point of a sweep as drawn: its offered load and its summary figures.
type curvePoint struct {
	x float64
	p *metrics.PointSummary
}

// offeredAxis is the x axis of a sweep's curves: users for a concurrency sweep, else the
// offered rate in req/s (a closed-loop point of --auto at its achieved throughput, the rate
// its users offered, as the sweep's search places it).
func offeredAxis(runs []Run) string {
	for _, r := range runs {
		if r.sweep != nil && r.sweepMode != "concurrency" {
			return "offered load (requests/s)"
		}
	}
	return "offered load (concurrent users)"
}

// curvePoints are a sweep's points with their x, in order of x.
func curvePoints(r Run, users bool) []curvePoint {
	var out []curvePoint
	for i := range r.sweep.points {
		p := &r.sweep.points[i]
		x := offeredRate(p)
		if users {
			x = float64(p.Concurrency)
		}
		if x > 0 && p.Poor() == "" { // a poor point's figures are not its load's: not drawn
			out = append(out, curvePoint{x: x, p: p})
		}
	}
	slices.SortStableFunc(out, func(a, b curvePoint) int { return cmp.Compare(a.x, b.x) })
	return out
}

// offeredRate is a point's offered rate: its arrival rate, or a closed loop's achieved
// throughput (the median over its runs).
func offeredRate(p *metrics.PointSummary) float64 {
	if p.Rate > 0 {
		return p.Rate
	}
	return deref(p.Median(reqTput))
}

// pointCharts returns the sweep curves when any run is a sweep.
func pointCharts(runs []Run) []*plot {
	slo, sweeps := false, false
	for _, r := range runs {
		if r.sweep != nil {
			sweeps, slo = true, slo || r.sweep.slo
		}
	}
	if !sweeps {
		return nil
	}
	xl := offeredAxis(runs)
	users := xl == "offered load (concurrent users)"
	ps := []*plot{
		pctCurve("sweep-ttft", "TTFT against offered load, per sweep point", xl, "TTFT (ms)", runs, users, ttftOf),
		pctCurve("sweep-tpot", "TPOT against offered load, per sweep point", xl, "TPOT (ms)", runs, users, tpotOf),
		figCurve("sweep-throughput", "Throughput against offered load, per sweep point", xl, "requests/s completed", runs, users,
			func(cp curvePoint) *float64 { return cp.p.Median(reqTput) }, func(cp curvePoint) float64 { return cp.x }),
		figCurve("sweep-user", "Output tokens/s per user against output tokens/s, per sweep point", "output tokens/s (all users)",
			"output tokens/s per user (median request)", runs, users,
			func(cp curvePoint) *float64 { return cp.p.MedianPct(userRate, 50) },
			func(cp curvePoint) float64 { return deref(cp.p.Median(outTput)) }),
	}
	if slo {
		ps = append(ps,
			figCurve("sweep-goodput", "Goodput against offered load, per sweep point", xl, "goodput (requests/s meeting every SLO)", runs, users,
				func(cp curvePoint) *float64 { return cp.p.Median(goodputOf) }, func(cp curvePoint) float64 { return cp.x }),
			figCurve("sweep-attainment", "SLO attainment against offered load, per sweep point", xl, "SLO attainment (%, lowest run)", runs, users,
				func(cp curvePoint) *float64 { return pct(cp.p.Attainment()) }, func(cp curvePoint) float64 { return cp.x }))
	}
	ps[2].note = "one dot per point (the median of its runs); a server keeping up completes what is offered"
	ps[3].note = "one dot per point, joined in order of offered load, lightest at the top left: the trade between each user's speed and the server's total (x is throughput, not offered load: where an overloaded point completes less, the line turns back)"
	return ps
}

// pctCurve draws a latency's p50 (solid) and p99 (dashed), in ms, against offered load.
func pctCurve(id, title, xLabel, yLabel string, runs []Run, users bool, stat func(*metrics.Summary) metrics.Stat) *plot {
	p := &plot{id: id, title: title, xLabel: xLabel, yLabel: yLabel,
		note: "solid p50, dashed p99; one dot per point (the median of its runs)"}
	for i, r := range runs {
		if r.sweep == nil {
			continue
		}
		for _, q := range []struct {
			pct    float64
			dashed bool
			name   string
		}{{50, false, " p50"}, {99, true, " p99"}} {
			var pts [][2]float64
			for _, cp := range curvePoints(r, users) {
				if v := cp.p.MedianPct(stat, q.pct); v != nil {
					pts = append(pts, [2]float64{cp.x, *v / 1e6})
				}
			}
			p.addCurve(i, r.Label+q.name, q.dashed, pts)
		}
	}
	return p
}

// figCurve draws a point figure y against x(point), joined in order of offered load.
func figCurve(id, title, xLabel, yLabel string, runs []Run, users bool, y func(curvePoint) *float64, x func(curvePoint) float64) *plot {
	p := &plot{id: id, title: title, xLabel: xLabel, yLabel: yLabel, note: "one dot per point (the median of its runs)"}
	for i, r := range runs {
		if r.sweep == nil {
			continue
		}
		var pts [][2]float64
		for _, cp := range curvePoints(r, users) {
			if v := y(cp); v != nil {
				pts = append(pts, [2]float64{x(cp), *v})
			}
		}
		p.addCurve(i, r.Label, false, pts)
	}
	return p
}

// addCurve adds a line through pts and a dot on each, coloured by run.
func (p *plot) addCurve(run int, label string, dashed bool, pts [][2]float64) {
	p.extend(pts)
	p.marks = append(p.marks, mark{kind: markLine, run: run, dashed: dashed, label: label, pts: pts},
		mark{kind: markDots, run: run, pts: pts, radius: 4})
}

// extend grows the axes to hold pts (from 0, with headroom above).
func (p *plot) extend(pts [][2]float64) {
	for _, pt := range pts {
		p.x1, p.y1 = max(p.x1, pt[0]*1.05), max(p.y1, pt[1]*1.1)
	}
}

// sweepCharts are the charts of a page with a sweep: the per-point curves, then the charts
// over time (the points one after another, each at its own time: nothing pooled). The
// distribution charts of a single run are left out: over a sweep they would pool every
// point's requests into one distribution.
func sweepCharts(runs []Run) []*plot {
	return append(pointCharts(runs),
		timeline(runs, scatterPlot(runs)),
		timePlot("tokens-time", "Output tokens per second, the points one after another", "output tokens/s",
			"completed requests' tokens over the whole sweep", runs, func(s *Series) []float64 { return s.tokens }),
		timePlot("inflight-time", "Requests in flight, the points one after another", "requests in flight",
			fmt.Sprintf("mean in flight over each bucket (sent → done), over the whole sweep of %d points", pointsOf(runs)), runs, (*Series).inFlight))
}

func pointsOf(runs []Run) int {
	n := 0
	for _, r := range runs {
		if r.sweep != nil {
			n += len(r.sweep.points)
		}
	}
	return n
}
