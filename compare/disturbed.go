package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"servebench/metrics"
)

// Runs the client itself says were disturbed. Every run records the load generator's own
// health per second (record.Quality: Go scheduling latency, its timer's lateness, CPU steal)
// and the steady check sums the seconds in which it was disturbed (metrics.Disturbance). A
// run whose client was disturbed for a quarter of its window or more measured the client's
// delays as much as the server's: over HTTP on a 2-core machine at load average 27–36, such a
// run read many events at once (ITL p50 0.00 ms, TTFT p50 206 ms against 35 and 52 ms in the
// other runs of its side). Such runs are left out of every metric before anything is
// compared, while at least two runs of the side remain, and a note names each with what its
// record says.
//
// The rule reads the client's record, never the metric's value, so under no change it leaves
// out runs independently of what they measured and biases nothing; it costs the side a run.
// The most disturbed runs leave first, and never below two a side: the rest are kept and named
// as disturbed. It cannot tell a server that disturbs its own client (one on the same machine
// that got heavier): then every run of the candidate is disturbed, two stay, and the notes
// say that their figures hold the client's delays. Its share (disturbedShare) and the runs it
// keeps (minRunsKept) are the policy's (policy.go).

// DisturbedRun is a run left out of every metric (or kept, see Kept) because its client was
// disturbed.
type DisturbedRun struct {
	Side    string  // "base" or "candidate"
	Run     int     // the run's index in its file
	Seconds float64 // how long its client was disturbed
	Window  float64 // its measurement window, s
	Why     []string
	// Kept: the run stayed in because fewer than two undisturbed runs would have remained.
	Kept bool
}

// clientDisturbed is how long run's client was disturbed and why; ok when it was for at least
// disturbedShare of the run's window.
func clientDisturbed(r metrics.RunSummary, k *knobs) (secs, window float64, why []string, ok bool) {
	s := r.Summary
	if s == nil || s.Steadiness == nil || s.Steadiness.Disturbance == nil {
		return 0, 0, nil, false
	}
	d := s.Steadiness.Disturbance
	window = s.Window.Seconds()
	return d.Seconds, window, d.Why, window > 0 && d.Seconds >= k.disturbedShare*window
}

// healthyRuns is runs without those whose client was disturbed, the most disturbed first,
// while at least two others remain, and the disturbed runs named (Kept: those that could not
// be left out).
func healthyRuns(side string, runs []metrics.RunSummary, k *knobs) ([]metrics.RunSummary, []DisturbedRun) {
	var out []DisturbedRun
	for _, r := range runs {
		if secs, w, why, ok := clientDisturbed(r, k); ok {
			out = append(out, DisturbedRun{Side: side, Run: r.Run, Seconds: secs, Window: w, Why: why})
		}
	}
	if len(out) == 0 {
		return runs, nil
	}
	slices.SortStableFunc(out, func(a, b DisturbedRun) int { return cmp.Compare(b.Seconds/b.Window, a.Seconds/a.Window) })
	drop := map[int]bool{}
	for i := range out {
		if len(runs)-len(drop) <= k.minRunsKept {
			out[i].Kept = true
			continue
		}
		drop[out[i].Run] = true
	}
	var kept []metrics.RunSummary
	for _, r := range runs {
		if !drop[r.Run] {
			kept = append(kept, r)
		}
	}
	slices.SortStableFunc(out, func(a, b DisturbedRun) int { return cmp.Compare(a.Run, b.Run) })
	return kept, out
}

// brieflyDisturbed are the runs whose client's record says it was disturbed for some of the
// run but less than disturbedShare of it: they stay in every metric, and a note names them so
// that a reader of a comparison made on a busy machine sees which runs it touched.
func brieflyDisturbed(side string, runs []metrics.RunSummary, k *knobs) []DisturbedRun {
	var out []DisturbedRun
	for _, r := range runs {
		if secs, w, why, ok := clientDisturbed(r, k); !ok && secs > 0 {
			out = append(out, DisturbedRun{Side: side, Run: r.Run, Seconds: secs, Window: w, Why: why, Kept: true})
		}
	}
	return out
}

// disturbedNotes names each run its client's record marked disturbed, and in one note those
// it marked disturbed for less than a quarter of the run.
func (r *Result) disturbedNotes() {
	if len(r.Brief) > 0 {
		var runs []string
		why := map[string]bool{}
		var whys []string
		for _, d := range r.Brief {
			runs = append(runs, fmt.Sprintf("%s run %d (%.2g s of %.3g s)", d.Side, d.Run+1, d.Seconds, d.Window))
			for _, w := range d.Why {
				if !why[w] {
					why[w] = true
					whys = append(whys, w)
				}
			}
		}
		r.warnf("briefly disturbed, kept: the load generator's own health record marks %s disturbed (%s), under a quarter of each window; their figures hold those seconds",
			strings.Join(runs, ", "), strings.Join(whys, ", "))
	}
	for _, d := range r.Disturbed {
		what := fmt.Sprintf("its load generator was disturbed for %.3g s of its %.3g s window (%s, from the run's own health record)",
			d.Seconds, d.Window, strings.Join(d.Why, ", "))
		if d.Kept {
			r.warnf("%s run %d: %s, but it was kept: leaving it out would leave fewer than two runs of the %s; its figures hold the client's delays too", d.Side, d.Run+1, what, d.Side)
			continue
		}
		r.warnf("%s run %d left out as disturbed from every metric: %s; the side's other runs decide it", d.Side, d.Run+1, what)
	}
}
