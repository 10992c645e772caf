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
// delays as much as the server's (figures: docs/compare-evidence.md, "Runs whose client says it
// was disturbed"). Such runs are left out of every metric before anything is
// compared, while at least two runs of the side remain, and a note names each with what its
// record says.
//
// The rule reads the client's record, never the metric's value, so under no change it leaves
// out runs independently of what they measured and biases nothing; it costs the side a run.
// The most disturbed runs leave first, and never below two a side: the rest are kept and named
// as disturbed. It cannot tell a server that disturbs its own client (one on the same machine
// that got heavier): then every run of the candidate is disturbed, two stay, and the notes
// say that their figures hold the client's delays. Its share (disturbedShare) is the policy's;
// the runs it keeps (minRunsKept) the method's (policy.go).

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
	return d.Seconds, window, d.Why, window > 0 && d.Seconds > 0 && d.Seconds >= k.disturbedShare*window
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
		if len(runs)-len(drop) <= minRunsKept {
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

// disturbedTails demotes a tail (p99) called improved or regressed to inconclusive when a run
// of the side it got worse on (the candidate for a regression, the base for an improvement)
// was disturbed by its client's own record, and notes it: a run left out or kept as disturbed
// (a quarter of its window or more), or one disturbed briefly for more of its window than the
// tail holds (1% for a p99). A disturbance on the other side can only hide such a change, not
// make it. A p99 is set by a run's few slowest requests, and on a disturbed machine those are
// the machine's: a client that waited for a CPU reads a burst of events late (each late read
// one long gap), and a server on the same machine (a loopback URL) waits for the same CPUs.
// The runs cannot tell the machine's stalls from the server's, so the tail's change is not
// called; it still holds the verdict at inconclusive when it moved (blocks), and a change of a
// median or a rate is called as before. A tail whose own median (TTFT p50 for TTFT p99, …)
// made the same change stands: the whole distribution moved, which a few stalls cannot do.
// The A/A pairs that were called regressed this way, and the changes that stood, are in
// docs/compare-evidence.md, item "A p99 beside disturbed runs".
func (r *Result) disturbedTails(br, cr []metrics.RunSummary) {
	if !r.k().has(RuleDisturbedTail) {
		return
	}
	worse := func(side string, pct float64) []string {
		var runs []string
		for _, d := range r.Disturbed {
			if d.Side == side {
				runs = append(runs, fmt.Sprintf("%s run %d", d.Side, d.Run+1))
			}
		}
		for _, d := range r.Brief {
			if d.Side == side && d.Window > 0 && d.Seconds > (1-pct/100)*d.Window {
				runs = append(runs, fmt.Sprintf("%s run %d (briefly, %.2g s of %.3g s)", d.Side, d.Run+1, d.Seconds, d.Window))
			}
		}
		return runs
	}
	change := map[string]string{}
	for _, row := range r.Rows {
		change[row.Metric.Name] = row.Change
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		if !row.Metric.Tail || (row.Change != Regressed && row.Change != Improved) {
			continue
		}
		if change[tailMedian[row.Metric.Name]] == row.Change {
			continue
		}
		side := "candidate" // the side whose figure got worse
		if row.Change == Improved {
			side = "base"
		}
		runs := worse(side, row.Metric.Pct)
		if len(runs) == 0 {
			continue
		}
		was := row.Change
		row.Change = Inconclusive
		addStep(&row.Why, RuleDisturbedTail, Inconclusive, true, fig("delta", row.Delta), fig("delta_lo", row.DeltaLo), fig("delta_hi", row.DeltaHi),
			fig("disturbed_runs", float64(len(runs))))
		were := "were"
		if len(runs) == 1 {
			were = "was"
		}
		r.warnf("%s %s %+.1f%% [%+.1f%%, %+.1f%%] in its runs, but %s %s disturbed by their client's own health record: a p99 is set by a run's slowest requests, and on a disturbed machine those are the machine's (a client that waits for a CPU reads events late; a server on the same machine waits too), so the change is not called and this metric is inconclusive%s; measure both sides again on a quiet machine",
			row.Metric.Name, was, 100*row.Delta, 100*row.DeltaLo, 100*row.DeltaHi, strings.Join(runs, ", "), were, serverTailSaw(row.Metric, br, cr))
	}
}

// tailMedian is each tail's median: the same distribution's centre.
var tailMedian = map[string]string{TTFTp99.Name: TTFTp50.Name, ITLp99.Name: ITLp50.Name, E2Ep99.Name: E2Ep50.Name}

// serverTailSaw is, for a tail the server also measures (TTFT p99, ITL p99), its own figure on
// both sides (median over runs) in words, "" when a run lacks it: whether the server's own
// histogram saw the change too, which the client's record cannot say.
func serverTailSaw(m Metric, br, cr []metrics.RunSummary) string {
	f, ok := serverTail[m.Name]
	if !ok {
		return ""
	}
	for _, r := range append(slices.Clone(br), cr...) {
		if _, ok := f.get(r.Summary); !ok {
			return ""
		}
	}
	b, c := medianOf(br, f.get), medianOf(cr, f.get)
	if b == nil || c == nil || *b <= 0 {
		return ""
	}
	return fmt.Sprintf(" (the server's own histogram: %s %.4g → %.4g ms, %+.0f%%)", f.name, *b, *c, 100*(*c / *b - 1))
}
