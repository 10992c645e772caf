package metrics

import (
	"cmp"
	"fmt"
	"slices"

	"servebench/record"
)

// The client's own health in the steady check: a window in which the load generator was
// disturbed (its goroutines waited for a CPU, its timer woke late, the hypervisor took the
// machine's CPU, or its sends went out late) says nothing about the server, and a trend
// test that counts it can call a steady server unsteady. Such windows are left out of the
// series the check tests, and the check says how many.
//
// The thresholds are far above a busy machine's ordinary figures, so only a client that was
// truly held up is left out; the figures they were set from are in docs/metrics.md "Steady
// state" ("The client's own health"), kept there because they change with the machine.
// interval is a span of time in ns since t0, [a, b).
type interval struct{ a, b float64 }

// Disturbance is what the steady check knew of the client's health and left out.
type Disturbance struct {
	// Seconds is how long the client was disturbed, in all, during the run; Intervals how
	// many separate spans that was.
	Seconds   float64 `json:"seconds"`
	Intervals int     `json:"intervals"`
	// Windows is how many of the check's windows it covered by disturb_share or more (the
	// most of any series tested).
	Windows int `json:"windows_left_out"`
	// Excused are the drifts ("itl rose") that the series without those windows no longer
	// showed: the client's, not counted.
	Excused []string `json:"excused,omitempty"`
	// Why names the signals that fired: "scheduling latency", "timer", "CPU steal",
	// "late sends".
	Why []string `json:"why"`
}

// disturbed finds the intervals in which the client was disturbed, from the run-end lines'
// health windows and, for a load without a concurrency cap (where a late send is the
// sender's own delay, not a wait for a slot), the records' dispatch lateness per 1 s.
func (s *steadyAcc) disturbed(health []record.HealthWindow, capped bool) ([]interval, []string) {
	var out []interval
	why := map[string]bool{}
	for _, h := range health {
		var r []string
		if h.SchedP99 >= disturbSched && !s.off("disturb_sched_ms") {
			r = append(r, "scheduling latency")
		}
		if float64(h.TickLate) >= disturbLate && !s.off("disturb_late_ms") {
			r = append(r, "timer")
		}
		if h.HasProc && h.Steal >= disturbSteal && !s.off("disturb_steal") {
			r = append(r, "CPU steal")
		}
		if len(r) > 0 {
			out = append(out, interval{float64(h.End - h.Span), float64(h.End)})
			for _, x := range r {
				why[x] = true
			}
		}
	}
	if !capped {
		buckets := map[int64][]float64{}
		for _, sp := range s.spans {
			if sp.late > 0 || sp.sched > 0 {
				buckets[sp.sched/1e9] = append(buckets[sp.sched/1e9], float64(sp.late))
			}
		}
		for sec, ls := range buckets {
			if len(ls) < 3 {
				continue
			}
			slices.Sort(ls)
			if Quantile(ls, 90) >= disturbLate && !s.off("disturb_late_ms") {
				out = append(out, interval{float64(sec) * 1e9, float64(sec+1) * 1e9})
				why["late sends"] = true
			}
		}
	}
	slices.SortFunc(out, func(x, y interval) int { return cmp.Compare(x.a, y.a) })
	var names []string
	for _, k := range []string{"scheduling latency", "timer", "CPU steal", "late sends"} {
		if why[k] {
			names = append(names, k)
		}
	}
	return mergeIntervals(out), names
}

// mergeIntervals joins overlapping or touching intervals (sorted by start).
func mergeIntervals(iv []interval) []interval {
	var out []interval
	for _, x := range iv {
		if n := len(out); n > 0 && x.a <= out[n-1].b {
			out[n-1].b = max(out[n-1].b, x.b)
			continue
		}
		out = append(out, x)
	}
	return out
}

// coveredShare is the share of [a, b] that the intervals cover (for a = b: 1 when inside
// one, else 0).
func coveredShare(iv []interval, a, b float64) float64 {
	if b <= a {
		for _, x := range iv {
			if a >= x.a && a < x.b {
				return 1
			}
		}
		return 0
	}
	c := 0.0
	for _, x := range iv {
		c += max(0, min(b, x.b)-max(a, x.a))
	}
	return c / (b - a)
}

// withoutDisturbed is sr less the windows the disturbed intervals cover by share
// (disturbShare) or more, and how many were left out.
func withoutDisturbed(sr series, iv []interval, share float64) (series, int) {
	if len(iv) == 0 || len(sr.spans) != len(sr.xs) {
		return sr, 0
	}
	keep := make([]bool, len(sr.xs))
	n := 0
	for i, sp := range sr.spans {
		keep[i] = coveredShare(iv, sp[0], sp[1]) < share
		if !keep[i] {
			n++
		}
	}
	if n == 0 {
		return sr, 0
	}
	out := sr
	out.xs, out.ts, out.spans = nil, nil, nil
	for i := range sr.xs {
		if keep[i] {
			out.xs, out.ts, out.spans = append(out.xs, sr.xs[i]), append(out.ts, sr.ts[i]), append(out.spans, sr.spans[i])
		}
	}
	out.win = nil
	for i, w := range sr.win {
		if len(sr.win) == len(sr.xs) && keep[i] {
			out.win = append(out.win, w)
		}
	}
	out.covs = nil
	for _, c := range sr.covs {
		if len(c) != len(sr.xs) {
			out.covs = append(out.covs, nil)
			continue
		}
		var cc []float64
		for i := range c {
			if keep[i] {
				cc = append(cc, c[i])
			}
		}
		out.covs = append(out.covs, cc)
	}
	return out, n
}

// movedBy is how far a series moved between the medians of its first and last thirds (as
// trend measures a drift's size), over its median, in direction dir ("rose" or "fell"):
// negative when it moved the other way.
func movedBy(xs []float64, dir string) float64 {
	if len(xs) == 0 {
		return 0
	}
	first, last, ch := thirds(xs)
	if (last < first) != (dir == "fell") {
		ch = -ch
	}
	return ch
}

// disturbance sums the intervals up for the report.
func disturbance(iv []interval, why []string, left int) *Disturbance {
	if len(iv) == 0 {
		return nil
	}
	d := &Disturbance{Intervals: len(iv), Windows: left, Why: why}
	for _, x := range iv {
		d.Seconds += (x.b - x.a) / 1e9
	}
	return d
}

// disturbanceWarning says when the client was disturbed, and what the check did not count.
func disturbanceWarning(d *Disturbance) string {
	msg := fmt.Sprintf("the client was disturbed for %.3g s in %d spans (%s), %d of the steady check's windows fell in them",
		d.Seconds, d.Intervals, joinAnd(d.Why), d.Windows)
	if len(d.Excused) > 0 {
		msg += fmt.Sprintf("; without those windows there was no drift of %s: the client's, not counted", joinAnd(d.Excused))
	}
	return msg + "; the figures include every window: give servebench a quieter machine or more CPU"
}
