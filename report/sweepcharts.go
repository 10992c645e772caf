package report

import (
	"sort"

	"servebench/metrics"
)

// Point is one run of a records file that holds several: a sweep point or a --repeat run.
// An HTML report given points draws throughput against latency and goodput per point.
type Point struct {
	Label   string
	Summary *metrics.Summary
}

// pointCharts returns the per-point charts when any run has more than one point: TTFT and
// E2E p50 (solid) and p99 (dashed) against achieved request throughput, and goodput per
// point when SLOs were set. Points are joined in order of throughput, so a sweep draws the
// classic latency-throughput curve whose knee is where latency turns up.
func pointCharts(runs []Run) []*plot {
	multi, slo := false, false
	for _, r := range runs {
		multi = multi || len(r.Points) > 1
		for _, p := range r.Points {
			slo = slo || p.Summary.SLO.Any()
		}
	}
	if !multi {
		return nil
	}
	ps := []*plot{
		latencyCurve("sweep-ttft", "TTFT against throughput, per run or sweep point", "TTFT (ms)", runs, func(s *metrics.Summary) metrics.Stat { return s.TTFT }),
		latencyCurve("sweep-e2e", "E2E latency against throughput, per run or sweep point", "E2E (ms)", runs, func(s *metrics.Summary) metrics.Stat { return s.E2E }),
	}
	if slo {
		ps = append(ps, goodputCurve(runs))
	}
	return ps
}

// byThroughput returns the points that have a request throughput, sorted by it.
func byThroughput(pts []Point) []Point {
	var out []Point
	for _, p := range pts {
		if p.Summary != nil && p.Summary.RequestThroughput != nil {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return *out[i].Summary.RequestThroughput < *out[j].Summary.RequestThroughput })
	return out
}

// latencyCurve draws stat's p50 and p99 (ms) against request throughput for every run.
func latencyCurve(id, title, yLabel string, runs []Run, stat func(*metrics.Summary) metrics.Stat) *plot {
	p := &plot{id: id, title: title, xLabel: "achieved requests/s", yLabel: yLabel,
		note: "solid p50, dashed p99; one point per run of the file"}
	for i, r := range runs {
		for _, q := range []struct {
			pct    float64
			dashed bool
		}{{50, false}, {99, true}} {
			var pts [][2]float64
			for _, pt := range byThroughput(r.Points) {
				if v, ok := stat(pt.Summary).Percentile(q.pct); ok {
					pts = append(pts, [2]float64{*pt.Summary.RequestThroughput, v / 1e6})
				}
			}
			p.extend(pts)
			label := r.Label + " p50"
			if q.dashed {
				label = r.Label + " p99"
			}
			p.marks = append(p.marks, mark{kind: markLine, run: i, dashed: q.dashed, label: label, pts: pts},
				mark{kind: markDots, run: i, pts: pts})
		}
	}
	return p
}

// goodputCurve draws goodput (requests/s meeting every SLO) against request throughput.
func goodputCurve(runs []Run) *plot {
	p := &plot{id: "sweep-goodput", title: "Goodput against throughput, per run or sweep point",
		xLabel: "achieved requests/s", yLabel: "goodput (requests/s meeting every SLO)",
		note: "where goodput falls away from throughput, requests stop meeting the SLOs"}
	for i, r := range runs {
		var pts [][2]float64
		for _, pt := range byThroughput(r.Points) {
			if g := pt.Summary.RequestGoodput; g != nil {
				pts = append(pts, [2]float64{*pt.Summary.RequestThroughput, *g})
			}
		}
		p.extend(pts)
		p.marks = append(p.marks, mark{kind: markLine, run: i, label: r.Label, pts: pts}, mark{kind: markDots, run: i, pts: pts})
	}
	return p
}

// extend grows the axes to hold pts (from 0, with headroom above).
func (p *plot) extend(pts [][2]float64) {
	for _, pt := range pts {
		p.x1, p.y1 = max(p.x1, pt[0]*1.05), max(p.y1, pt[1]*1.1)
	}
}
