package metrics

import (
	"fmt"
	"strings"

	"servebench/stat"
)

// The runs of a --repeat file measure one workload against one server, so they should agree
// within their own noise. Runs that do not (a machine that turned busy, a server warming up
// across them) measured different conditions, and the file says so before anything else
// (RepeatCheck); its notes are every run's, each said once with the runs it applies to
// (FoldRuns).

// repeatGap is the practical threshold of RepeatCheck: runs whose medians are apart by less
// than this share are not called to disagree, however narrow their intervals (thousands of
// requests make them so narrow that a real server's few-percent drift between runs would
// trip the test alone).
const repeatGap = 0.10

// Interval is a figure's distribution-free 95% interval (ns for latencies); OK is false when
// it has none (fewer than 6 values).
type Interval struct {
	Lo, Hi float64
	OK     bool
}

// medianInterval is the 95% interval of a sorted sample's median (stat.MedianCI).
func medianInterval(sorted sample) Interval {
	lo, hi, ok := stat.MedianCI(sorted)
	return Interval{lo, hi, ok}
}

// repeatMetric is a median RepeatCheck judges: its name, each run's median and interval.
type repeatMetric struct {
	name string
	stat func(*Summary) (float64, Interval)
}

// repeatMetrics are the medians judged: E2E, which a closed loop's request rate follows
// (users / mean E2E) and an open loop's slowdown shows in, and TTFT, where a disturbance of
// prefill alone is diluted in a long output's E2E. ITL is not judged: its gaps within one
// request are not independent, so its interval from thousands of gaps is far narrower than
// its run-to-run noise.
var repeatMetrics = []repeatMetric{
	{"E2E p50", func(s *Summary) (float64, Interval) { return s.E2E.Median, s.E2EMedianCI }},
	{"TTFT p50", func(s *Summary) (float64, Interval) { return s.TTFT.Median, s.TTFTMedianCI }},
}

// RepeatCheck judges whether the runs of a --repeat file agree within their own noise: for
// each of E2E p50 and TTFT p50, the runs with the lowest and the highest median disagree when
// their medians' 95% intervals (stat.MedianCI) do not overlap AND the higher is more than
// repeatGap above the lower. It returns a warning (level Distorts, so the quality reads at
// best fair) naming the medians run by run, the request rates, and the likely cause: a trend
// across the runs, the machine's load average and the client's own disturbance in each run;
// nil when they agree or cannot be judged (fewer than 2 runs with an interval). Non-
// overlapping 95% intervals of two runs of one distribution happen about 0.6% of the time
// (the difference is then 2.77 of its standard errors); docs/metrics.md gives the rates
// measured over HTTP.
func RepeatCheck(runs []RunSummary) *Warning {
	var parts []string
	first := -1 // the first metric that disagrees: the cause is read from it
	for k, m := range repeatMetrics {
		var lo, hi *RunSummary
		var meds []float64
		for i := range runs {
			r := &runs[i]
			if r.Summary == nil {
				continue
			}
			v, iv := m.stat(r.Summary)
			if !iv.OK {
				continue
			}
			meds = append(meds, v)
			if lo == nil || v < loMed(lo, m) {
				lo = r
			}
			if hi == nil || v > loMed(hi, m) {
				hi = r
			}
		}
		if len(meds) < 2 {
			continue
		}
		lv, liv := m.stat(lo.Summary)
		hv, hiv := m.stat(hi.Summary)
		if !(hiv.Lo > liv.Hi) || !(lv > 0) || hv/lv-1 <= repeatGap {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s ms (run %d is %.0f%% above run %d, and their medians' 95%% intervals, [%s, %s] and [%s, %s] ms, do not overlap)",
			m.name, msList(meds), hi.Run+1, 100*(hv/lv-1), lo.Run+1, grouped(hiv.Lo/1e6), grouped(hiv.Hi/1e6), grouped(liv.Lo/1e6), grouped(liv.Hi/1e6)))
		if first < 0 {
			first = k
		}
	}
	if parts == nil {
		return nil
	}
	text := fmt.Sprintf("the %d runs disagree beyond their own noise: %s", len(runs), strings.Join(parts, "; "))
	if rates := rateList(runs); rates != "" {
		text += "; request throughput " + rates + " req/s"
	}
	text += "; " + repeatCause(runs, repeatMetrics[first])
	return &Warning{Level: Distorts, Text: text,
		Action: "the runs measured different conditions, not one server's noise: rerun with nothing else running on the machine or sending to the server, and a longer --warmup if the first runs were the slow ones; compare reads this spread as run-to-run noise"}
}

func loMed(r *RunSummary, m repeatMetric) float64 { v, _ := m.stat(r.Summary); return v }

// repeatCause is the likely cause of runs that disagree on metric m: a trend over three or
// more runs (each faster than the one before: a warming machine or server, a load that
// ended; each slower: a load that grew, a server that slowed), else which runs were slower
// than the fastest beyond both its interval and repeatGap: the first, the last, or some in
// between (a disturbance); then what the client saw of its machine in each run (its
// load average, its own disturbance).
func repeatCause(runs []RunSummary, m repeatMetric) string {
	var fast *RunSummary
	for i := range runs {
		if r := &runs[i]; r.Summary != nil {
			if _, iv := m.stat(r.Summary); iv.OK && (fast == nil || loMed(r, m) < loMed(fast, m)) {
				fast = r
			}
		}
	}
	fv, fiv := m.stat(fast.Summary)
	var slow []int // positions in runs
	for i, r := range runs {
		if r.Summary == nil {
			continue
		}
		if v, iv := m.stat(r.Summary); iv.OK && iv.Lo > fiv.Hi && v/fv-1 > repeatGap {
			slow = append(slow, i)
		}
	}
	idx := make([]int, len(slow))
	for i, k := range slow {
		idx[i] = runs[k].Run
	}
	which := "run " + runList(idx)
	if len(idx) > 1 {
		which = "runs " + runList(idx)
	}
	were, them := "were", "them"
	if len(idx) == 1 {
		were, them = "was", "it"
	}
	contiguous := slow[len(slow)-1]-slow[0] == len(slow)-1
	var meds []float64 // in run order
	for _, r := range runs {
		if r.Summary != nil {
			if v, iv := m.stat(r.Summary); iv.OK {
				meds = append(meds, v)
			}
		}
	}
	up, down := len(meds) >= 3, len(meds) >= 3
	for i := 1; i < len(meds); i++ {
		up = up && meds[i] > meds[i-1]
		down = down && meds[i] < meds[i-1]
	}
	var cause string
	switch {
	case down:
		cause = "each run was faster than the one before: the machine or the server was warming up, or another load was ending"
	case up:
		cause = "each run was slower than the one before: another load was growing beside the runs, or the server slowed (throttling, a cache filling)"
	case contiguous && slow[0] == 0:
		cause = fmt.Sprintf("%s (the first) %s slower than the rest: the machine or the server was warming up, or another load ended during the repeat", which, were)
	case contiguous && slow[len(slow)-1] == len(runs)-1:
		cause = fmt.Sprintf("%s (the last) %s slower than the rest: another load started beside %s, or the server slowed (throttling, a cache filling)", which, were, them)
	default:
		cause = fmt.Sprintf("%s %s slower than the rest, with no trend across the runs: something disturbed %s (another load on the machine or the server)", which, were, them)
	}
	if l := loadList(runs); l != "" {
		cause += "; the machine's load average (1 min) was " + l
	}
	var dist []string
	for _, r := range runs {
		if r.Summary == nil || r.Summary.Steadiness == nil || r.Summary.Steadiness.Disturbance == nil {
			continue
		}
		d := r.Summary.Steadiness.Disturbance
		dist = append(dist, fmt.Sprintf("run %d for %.3g s (%s)", r.Run+1, d.Seconds, joinAnd(d.Why)))
	}
	if dist != nil {
		cause += "; the client itself was disturbed in " + joinAnd(dist)
	}
	return cause
}

// msList is medians in ns as "1,050, 810, 612" ms, in run order.
func msList(ns []float64) string {
	out := make([]string, len(ns))
	for i, v := range ns {
		out[i] = grouped(v / 1e6)
	}
	return strings.Join(out, ", ")
}

// rateList is each run's request throughput, "12.3, 19.6, 24.7"; "" when one has none.
func rateList(runs []RunSummary) string {
	var out []string
	for _, r := range runs {
		if r.Summary == nil || r.Summary.RequestThroughput == nil {
			return ""
		}
		out = append(out, fmt.Sprintf("%.3g", *r.Summary.RequestThroughput))
	}
	return strings.Join(out, ", ")
}

// loadList is each run's mean 1-minute load average over its health windows, "3.1, 2.0,
// 0.8 in runs 1–3"; "" when a run has none (not Linux, or a file without health windows).
func loadList(runs []RunSummary) string {
	var out []string
	for _, r := range runs {
		var sum float64
		n := 0
		if r.Summary != nil {
			for _, e := range r.Summary.Ends {
				if e.Quality == nil {
					continue
				}
				for _, w := range e.Quality.Windows {
					if w.HasProc {
						sum += w.Load1
						n++
					}
				}
			}
		}
		if n == 0 {
			return ""
		}
		out = append(out, fmt.Sprintf("%.1f", sum/float64(n)))
	}
	return strings.Join(out, ", ") + " in runs " + runList(runIndexes(runs))
}

func runIndexes(runs []RunSummary) []int {
	out := make([]int, len(runs))
	for i, r := range runs {
		out[i] = r.Run
	}
	return out
}

// runList writes 0-based run indexes 1-based, as a person counts, with ranges: "1–3",
// "1, 3", "2, 4–6".
func runList(idx []int) string {
	var out []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if j-i >= 1 {
			out = append(out, fmt.Sprintf("%d–%d", idx[i]+1, idx[j]+1))
		} else {
			out = append(out, fmt.Sprint(idx[i]+1))
		}
		i = j + 1
	}
	return strings.Join(out, ", ")
}

// FoldRuns is every run's warnings said once each, for the notes of a file of several runs:
// a warning that differs between runs only in its figures (and its leading run label) is
// one, quoted as its worst-level run said it, at that level, with the runs it applies to
// appended ("(runs 1–3)", or "(runs 1, 3; run 3's figures)"). A file of one run keeps its
// warnings as they are.
func FoldRuns(runs []RunSummary) []Warning {
	if len(runs) == 1 && runs[0].Summary != nil {
		return runs[0].Summary.Warnings
	}
	type group struct {
		w       Warning
		from    int // the run whose text is quoted
		runs    []int
		differs bool
	}
	var gs []*group
	index := map[string]*group{}
	for _, r := range runs {
		if r.Summary == nil {
			continue
		}
		for _, w := range r.Summary.Warnings {
			if r.Label != "" {
				w.Text = strings.TrimPrefix(w.Text, r.Label+": ")
			}
			key := figureRE.ReplaceAllString(w.Text, "#")
			g := index[key]
			if g == nil {
				g = &group{w: w, from: r.Run}
				index[key] = g
				gs = append(gs, g)
			}
			g.differs = g.differs || w.Text != g.w.Text
			if w.Level.rank() < g.w.Level.rank() {
				g.w, g.from = w, r.Run
			}
			if n := len(g.runs); n == 0 || g.runs[n-1] != r.Run {
				g.runs = append(g.runs, r.Run)
			}
		}
	}
	out := make([]Warning, 0, len(gs))
	for _, g := range gs {
		w := g.w
		which := "run " + runList(g.runs)
		if len(g.runs) > 1 {
			which = "runs " + runList(g.runs)
		}
		if g.differs {
			which += fmt.Sprintf("; run %d's figures", g.from+1)
		}
		w.Text += " (" + which + ")"
		out = append(out, w)
	}
	return ordered(out)
}

// RepeatNotes are the notes of a --repeat file: RepeatCheck's warning first when the runs
// disagree, then FoldRuns.
func RepeatNotes(runs []RunSummary) []Warning {
	ws := FoldRuns(runs)
	if w := RepeatCheck(runs); w != nil {
		ws = append([]Warning{*w}, ws...)
	}
	return ws
}
