package metrics

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"servebench/record"
)

// PointSummary is one load of a sweep and its runs: one, or sweep --repeat of them. Each run
// keeps its own summary (pooling runs would put the gaps between them into the window); the
// point's figures are medians over its runs.
type PointSummary struct {
	Label       string
	Concurrency int     // closed-loop users, 0 for an open loop
	Rate        float64 // open-loop req/s, 0 for a closed loop
	Runs        []RunSummary
}

// Points groups the runs of a sweep file into its points: in the order of the sweep-end
// line's points when the file has one, otherwise by the load of each run's run-end line
// (runs of the same load are repeats of one point), in order of first appearance. A run
// without a run-end line is a point of its own.
func Points(h *record.Header, runs []RunSummary) []PointSummary {
	byRun := map[int]RunSummary{}
	for _, r := range runs {
		byRun[r.Run] = r
	}
	if h != nil && h.SweepEnd != nil && len(h.SweepEnd.Points) > 0 {
		var out []PointSummary
		for _, sp := range h.SweepEnd.Points {
			p := PointSummary{Label: sp.Label, Concurrency: sp.Concurrency, Rate: sp.Rate}
			for _, k := range sp.Runs {
				if r, ok := byRun[k]; ok {
					p.Runs = append(p.Runs, r)
				}
			}
			if len(p.Runs) > 0 {
				out = append(out, p)
			}
		}
		return out
	}
	return pointsByLoad(h, runs)
}

// pointsByLoad is Points for a file without a sweep-end line (interrupted, or older).
func pointsByLoad(h *record.Header, runs []RunSummary) []PointSummary {
	ends := map[int]record.RunEnd{}
	if h != nil {
		for _, e := range h.Ends {
			ends[e.Run] = e
		}
	}
	var out []PointSummary
	index := map[string]int{}
	for _, r := range runs {
		e, ok := ends[r.Run]
		key := fmt.Sprintf("c%d r%g", e.Concurrency, e.Rate)
		if !ok || e.Concurrency == 0 && e.Rate == 0 {
			key = fmt.Sprintf("run %d", r.Run)
		}
		i, seen := index[key]
		if !seen {
			i = len(out)
			index[key] = i
			label, _, _ := strings.Cut(r.Label, ", repeat ")
			if label == "" {
				label = fmt.Sprintf("run %d", r.Run)
			}
			out = append(out, PointSummary{Label: label, Concurrency: e.Concurrency, Rate: e.Rate})
		}
		out[i].Runs = append(out[i].Runs, r)
	}
	return out
}

// RunIndexes are the point's run indexes.
func (p *PointSummary) RunIndexes() []int {
	out := make([]int, len(p.Runs))
	for i, r := range p.Runs {
		out[i] = r.Run
	}
	return out
}

// Median is the median over the point's runs of a run-level figure (runs where it is
// undefined left out); nil when no run defines it.
func (p *PointSummary) Median(f func(*Summary) *float64) *float64 {
	var v []float64
	for _, r := range p.Runs {
		if x := f(r.Summary); x != nil && finite(*x) {
			v = append(v, *x)
		}
	}
	return medianOf(v)
}

// MedianPct is the median over the point's runs of percentile pct of a distribution (in its
// own unit: ns for latencies); nil when no run has a value.
func (p *PointSummary) MedianPct(f func(*Summary) Stat, pct float64) *float64 {
	var v []float64
	for _, r := range p.Runs {
		if x, ok := f(r.Summary).Percentile(pct); ok && finite(x) {
			v = append(v, x)
		}
	}
	return medianOf(v)
}

// Spread is (max − min) / median over the point's runs of a run-level figure: how far its
// repeats disagree; nil with fewer than two defined values or a zero median.
func (p *PointSummary) Spread(f func(*Summary) *float64) *float64 {
	var v []float64
	for _, r := range p.Runs {
		if x := f(r.Summary); x != nil && finite(*x) {
			v = append(v, *x)
		}
	}
	m := medianOf(v)
	if len(v) < 2 || m == nil || *m == 0 {
		return nil
	}
	s := (slices.Max(v) - slices.Min(v)) / math.Abs(*m)
	return &s
}

// Attainment is the lowest SLO attainment of the point's runs: a point meets the SLOs only
// when every one of its runs did. Nil when a run has none (no measured request, or no SLO).
func (p *PointSummary) Attainment() *float64 {
	var low *float64
	for _, r := range p.Runs {
		a := r.Summary.SLOAttainment
		if a == nil {
			return nil
		}
		if low == nil || *a < *low {
			low = a
		}
	}
	return low
}

// Failed is the failed requests of every run of the point.
func (p *PointSummary) Failed() int {
	n := 0
	for _, r := range p.Runs {
		n += r.Summary.Failed
	}
	return n
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func medianOf(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	slices.Sort(v)
	m := Quantile(v, 50)
	return &m
}

// WarningGroup is one distinct warning of a sweep and the points it applies to (indexes into
// the points given to GroupWarnings, in order).
type WarningGroup struct {
	Text   string
	Level  Level  // the worst of its points' levels
	Action string // the worst point's
	Points []int
	// Differs is true when the warning's figures differ between its points (e.g. "12 of 40
	// requests failed" and "3 of 40"): Text is then the worst point's, Shown (the first of
	// those at the worst level).
	Differs bool
	Shown   int
	// Milder is true when some of its points gave it at a milder level than Level (a
	// warning whose level follows its figures: "info" at one rate, "may distort" at the next).
	Milder bool
}

// figureRE matches the figures of a warning, so that one warning with different figures at
// different points is said once.
var figureRE = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

// GroupWarnings says each distinct warning of the points' runs once, at the worst level any
// gave it, with the points it applies to, in order of first appearance. Two warnings are the same when they differ
// only in their figures; a warning's leading run label ("rate 12 req/s: ...") is left out.
func GroupWarnings(points []PointSummary) []WarningGroup {
	var out []WarningGroup
	index := map[string]int{}
	for i, p := range points {
		for _, r := range p.Runs {
			for _, wn := range r.Summary.Warnings {
				w := wn.Text
				if r.Label != "" { // a warning about the run's own quality names the run: the group names its points
					w = strings.TrimPrefix(w, r.Label+": ")
				}
				key := figureRE.ReplaceAllString(w, "#")
				k, ok := index[key]
				if !ok {
					k = len(out)
					index[key] = k
					out = append(out, WarningGroup{Text: w, Level: wn.Level, Action: wn.Action, Shown: i})
				}
				g := &out[k]
				g.Differs = g.Differs || w != g.Text
				// one warning, said once at its worst level: the first point's level left a
				// "may distort" at a later point shown as "info"
				switch {
				case wn.Level.rank() < g.Level.rank():
					g.Milder, g.Text, g.Level, g.Action, g.Shown = true, w, wn.Level, wn.Action, i
				case wn.Level.rank() > g.Level.rank():
					g.Milder = true
				}
				if n := len(g.Points); n == 0 || g.Points[n-1] != i {
					g.Points = append(g.Points, i)
				}
			}
		}
	}
	return out
}
