package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"servebench/metrics"
	"servebench/stat"
)

// Disturbed runs. One run of three that met a load spike on the client's machine moves a
// side's mean and, worse, inflates the run-to-run spread that every interval rests on, so
// identical servers come out "inconclusive". A run whose value lies far outside what the other
// runs and its own requests make plausible is therefore left out of that metric's comparison,
// and the row and a note name it.
//
// Method: the externally studentized residual of each run (its distance from the mean of the
// other runs of its side, over the run-to-run spread of all the other runs of both sides, each
// side about its own mean; the other side's own farthest run is kept out of that spread too,
// so that one disturbed run a side cannot mask the other's, leaving N − 4 degrees of freedom),
// compared with Student's t at a Bonferroni-corrected level outlierAlpha/N (N the runs of both
// sides). A run must also differ by more than half the threshold, or leaving it out could not
// matter. At most
// one run per side is left out, and only from a side of three runs or more (two must remain).
// The rates measured with this rule over HTTP are in docs/metrics.md. Its constants
// (outlierAlpha and the rest) are the policy's (policy.go).

// Outlier is a run left out of a row as disturbed.
type Outlier struct {
	Side string  // "base" or "candidate"
	Run  int     // the run's index in its file
	Dev  float64 // its value over the geometric mean of the side's other runs, − 1
}

// dropOutliers returns the runs of both sides without their outliers, and the outliers.
func dropOutliers(bv, cv []runValue, threshold float64, k *knobs) ([]runValue, []runValue, []Outlier) {
	var out []Outlier
	bi := outlier(bv, cv, threshold, k)
	ci := outlier(cv, bv, threshold, k)
	if bi >= 0 {
		out = append(out, Outlier{"base", bv[bi].Run, deviation(bv, bi)})
		bv = slices.Delete(slices.Clone(bv), bi, bi+1)
	}
	if ci >= 0 {
		out = append(out, Outlier{"candidate", cv[ci].Run, deviation(cv, ci)})
		cv = slices.Delete(slices.Clone(cv), ci, ci+1)
	}
	return bv, cv, out
}

// deviation is run i's value over the geometric mean of the other runs of its side, − 1.
func deviation(vs []runValue, i int) float64 {
	return math.Expm1(vs[i].Log - meanExcept(vs, i))
}

func meanExcept(vs []runValue, i int) float64 {
	s := 0.0
	for j, v := range vs {
		if j != i {
			s += v.Log
		}
	}
	return s / float64(len(vs)-1)
}

// ssExcept is the sum of squares of vs about their mean, run i left out (i < 0: none).
func ssExcept(vs []runValue, i int) float64 {
	m := meanLogOf(vs)
	if i >= 0 {
		m = meanExcept(vs, i)
	}
	ss := 0.0
	for j, v := range vs {
		if j != i {
			ss += (v.Log - m) * (v.Log - m)
		}
	}
	return ss
}

func meanLogOf(vs []runValue) float64 {
	s := 0.0
	for _, v := range vs {
		s += v.Log
	}
	return s / float64(len(vs))
}

// outlier is the index of side's outlier run (the other side lends its spread), or −1.
func outlier(side, other []runValue, threshold float64, kn *knobs) int {
	k, n := len(side), len(side)+len(other)
	if k < kn.outlierMinSide || n < kn.outlierMinRuns {
		return -1
	}
	// the other side's most distant run is kept out of the spread too: one disturbed run on
	// each side would otherwise mask the other's
	j, lost := -1, 0
	if len(other) >= 3 {
		j, lost = farthest(other), 1
	}
	df := float64(n - 3 - lost)
	if df < 1 {
		return -1
	}
	crit := stat.TQuantile(1-kn.outlierAlpha/(2*float64(n)), df)
	best, bestT := -1, 0.0
	for i := range side {
		e := side[i].Log - meanExcept(side, i)
		if math.Abs(e) <= math.Log1p(kn.outlierMinDev*threshold) {
			continue
		}
		// the other runs' spread alone: each run's value already holds its own sampling noise.
		// (A floor at the runs' bootstrap variance was tried: in a closed loop whose users send
		// in waves the bootstrap of a p50 swings between waves, 2% where the runs agree within
		// 0.2%, and hid a run 6% off.) Only when the others agree exactly does it stand in.
		s2 := (ssExcept(side, i) + ssExcept(other, j)) / df
		if s2 == 0 {
			s2 = withinExcept(side, other, i, j)
		}
		t := math.Abs(e) / math.Sqrt(s2*(1+1/float64(k-1)))
		if s2 == 0 {
			t = math.Inf(1)
		}
		if t > crit && t > bestT {
			best, bestT = i, t
		}
	}
	return best
}

// farthest is the index of the run farthest from the mean of the others of its side.
func farthest(vs []runValue) int {
	best, d := 0, -1.0
	for i := range vs {
		if e := math.Abs(vs[i].Log - meanExcept(vs, i)); e > d {
			best, d = i, e
		}
	}
	return best
}

// withinExcept is the mean within-run variance of every run but side[i] and other[j] (an
// unbounded one left out).
func withinExcept(side, other []runValue, i, j int) float64 {
	w, n := 0.0, 0.0
	for x, v := range side {
		if x != i && !math.IsInf(v.Within, 0) {
			w += v.Within
			n++
		}
	}
	for x, v := range other {
		if x != j && !math.IsInf(v.Within, 0) {
			w += v.Within
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return w / n
}

// outlierNotes says, once per disturbed run, which metrics left it out and by how much it
// differed, and, where the server's own figures exist, whether the server saw the disturbance
// too (then it was the server's) or not (then it was the client's or the network's).
func (r *Result) outlierNotes(br, cr []metrics.RunSummary) {
	type key struct {
		side string
		run  int
	}
	var order []key
	what := map[key][]string{}
	for _, row := range r.Rows {
		for _, o := range row.Outliers {
			k := key{o.Side, o.Run}
			if what[k] == nil {
				order = append(order, k)
			}
			what[k] = append(what[k], fmt.Sprintf("%s %+.1f%%", row.Metric.Name, 100*o.Dev))
		}
	}
	for _, k := range order {
		runs := br
		if k.side == "candidate" {
			runs = cr
		}
		r.warnf("%s run %d left out as disturbed: %s from the side's other runs (an outlier at %g%% family-wise; the other runs decide those metrics)%s%s",
			k.side, k.run+1, strings.Join(what[k], ", "), 100*r.k().outlierAlpha, clientSaw(runs, k.run), serverSaw(runs, k.run))
	}
}

// serverSaw compares the server's own TTFT and ITL p50 in run against the other runs of its
// side and says whose the disturbance was: the server's when one of its figures moved by more
// than 5%, else the client's or the network's. "" when the server reported neither.
func serverSaw(runs []metrics.RunSummary, run int) string {
	var parts []string
	moved := false
	for _, f := range serverFigures {
		if f.name != "server TTFT p50" && f.name != "server ITL p50" {
			continue
		}
		var this *float64
		var others []metrics.RunSummary
		for i := range runs {
			if runs[i].Run == run {
				if v, ok := f.get(runs[i].Summary); ok {
					this = &v
				}
			} else {
				others = append(others, runs[i])
			}
		}
		rest := medianOf(others, f.get)
		if this == nil || rest == nil || *rest <= 0 {
			continue
		}
		d := *this / *rest - 1
		moved = moved || math.Abs(d) > serverMoved
		parts = append(parts, fmt.Sprintf("%s %.4g ms against %.4g ms (%+.1f%%)", f.name, *this, *rest, 100*d))
	}
	if len(parts) == 0 {
		return ""
	}
	whose := "they did not move, so the disturbance was the client's or the network's"
	if moved {
		whose = "they moved too, so the server itself ran differently in that run"
	}
	return "; the server's own figures in that run: " + strings.Join(parts, ", ") + ": " + whose
}

// serverMoved is the change of a server figure between runs taken as the server's own: its
// histograms are bucketed, and interpolation inside a bucket moves a p50 by a few percent.
const serverMoved = 0.05

// clientSaw compares the load generator's own health in run (its Go scheduling latency p99
// and busiest CPU second, from the run-end line) against the other runs of its side: "" when
// the runs did not record it.
func clientSaw(runs []metrics.RunSummary, run int) string {
	sched := func(s *metrics.Summary) (float64, bool) {
		for _, e := range s.Ends {
			if e.Quality != nil {
				return e.Quality.SchedP99 / 1e6, true
			}
		}
		return 0, false
	}
	var this *float64
	var others []metrics.RunSummary
	for i := range runs {
		if runs[i].Run == run {
			if v, ok := sched(runs[i].Summary); ok {
				this = &v
			}
		} else {
			others = append(others, runs[i])
		}
	}
	rest := medianOf(others, sched)
	if this == nil || rest == nil {
		return ""
	}
	return fmt.Sprintf("; the load generator's Go scheduling latency p99 in that run was %.3g ms against %.3g ms in the others", *this, *rest)
}
