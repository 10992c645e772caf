package report

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"servebench/compare"
	"servebench/conditions"
	"servebench/exitcode"
	"servebench/metrics"
	"servebench/record"
)

// The compare page: `report base.jsonl cand.jsonl --format html` (or md). It answers "better
// or worse?" first, with the figures of `servebench compare` at its defaults (compare.Compare:
// the same two-level t intervals, the same 5% threshold, the same condition diff), and shows
// the evidence under the answer: every repeat of each side as its own dot or line, never
// pooled, and never only the last one.

// cmpSide is one input read for the compare page: the comparison side (every run's summary
// and what the bootstrap needs) and one chart series per run.
type cmpSide struct {
	label  string // the file's name
	role   string // "base" or "candidate": the two files may share a name
	header *record.Header
	side   *compare.Side
	runs   []metrics.RunSummary
	series map[int]*Series // by Record.Run
}

// newCmpSide starts the side of the file labelled label, empty.
func newCmpSide(label string, h *record.Header, opt metrics.Options) *cmpSide {
	return &cmpSide{label: label, header: h, side: compare.NewSide(h, opt), series: map[int]*Series{}}
}

// add adds one record to the side and to its run's chart series.
func (cs *cmpSide) add(r *record.Record) {
	cs.side.Add(r)
	se := cs.series[r.Run]
	if se == nil {
		se = &Series{}
		cs.series[r.Run] = se
	}
	se.Add(r)
}

// readCmpSide reads an input's records once into its comparison side and per-run series.
func readCmpSide(in Input, format string) (*cmpSide, error) {
	recs, err := in.records(format)
	if err != nil {
		return nil, err
	}
	h := in.Header
	if h == nil {
		h = &record.Header{}
	}
	opt, err := metrics.HeaderOptions(in.Header)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.label(), err)
	}
	cs := newCmpSide(in.label(), h, opt)
	for r, err := range recs {
		if err != nil {
			return nil, err
		}
		cs.add(r)
	}
	cs.runs = cs.side.Runs()
	if len(cs.runs) == 0 {
		return nil, fmt.Errorf("%s: no records to compare", in.label())
	}
	return cs, nil
}

// comparison reads both inputs and compares them as `servebench compare` does with its
// defaults; goodput is compared when both sides carry SLOs, as there.
func comparison(ins []Input, format string) (base, cand *cmpSide, res *compare.Result, err error) {
	if base, err = readCmpSide(ins[0], format); err != nil {
		return nil, nil, nil, err
	}
	if cand, err = readCmpSide(ins[1], format); err != nil {
		return nil, nil, nil, err
	}
	base.role, cand.role = "base", "candidate"
	bo, _ := metrics.HeaderOptions(ins[0].Header) // read once already: no error
	co, _ := metrics.HeaderOptions(ins[1].Header)
	opt := ins[0].Compare
	opt.Goodput = bo.SLO.Any() && co.SLO.Any()
	res = compare.Compare(base.side, cand.side, opt)
	return base, cand, res, nil
}

// NothingLine is the one line compare ends with when the verdict is MeasuredNothing: which
// side measured nothing, or why no key metric could be compared (Result.Empty).
func NothingLine(r *compare.Result) string {
	switch r.Empty {
	case "base", "candidate":
		return fmt.Sprintf("the %s measured nothing: no completed measured request", r.Empty)
	case "both":
		return "neither side measured anything: no completed measured request on either"
	}
	return "nothing to compare: " + r.Empty
}

// exitLine says what `servebench compare` would exit with, in words.
func exitLine(r *compare.Result) string {
	code := r.ExitCode()
	what := map[int]string{exitcode.OK: "no regression", exitcode.Regression: "regressed",
		exitcode.NotComparable: "not comparable", exitcode.Inconclusive: "inconclusive",
		exitcode.Nothing: "a side measured nothing", exitcode.Provisional: "provisional: a side was not steady or invalid"}[code]
	return fmt.Sprintf("servebench compare would exit %d (%s)", code, what)
}

// flagsLine is the threshold and expected changes the verdict was judged with, as compare's
// flags: "at --threshold 5%" (the default), "at --threshold 3%, --expect-change server.version".
func flagsLine(r *compare.Result, expect []string) string {
	line := fmt.Sprintf("at --threshold %.4g%%", 100*r.Threshold)
	if r.Threshold < 1e-6 {
		line = "at --threshold 0 (every significant change counts)"
	} else if r.Threshold == 0.05 {
		line += " (the default)"
	}
	for _, e := range expect {
		line += ", --expect-change " + e
	}
	return line
}

// verdictClass is the CSS class of the verdict's box.
func verdictClass(v string) string {
	switch v {
	case compare.Regressed, compare.MeasuredNothing:
		return "bad"
	case compare.Improved:
		return "good"
	case compare.NoChange:
		return "same"
	}
	return "unsure"
}

// changeClass is the CSS class of a metric row's change.
func changeClass(c string) string {
	switch c {
	case compare.Regressed:
		return "bad"
	case compare.Improved:
		return "good"
	case compare.Inconclusive:
		return "unsure"
	}
	return ""
}

// runValue is one run's value of a key metric.
type runValue struct {
	Run int
	V   float64
}

// runValues returns each run's value of m where it is defined and finite.
func metricRunValues(m compare.Metric, runs []metrics.RunSummary) []runValue {
	var out []runValue
	for _, r := range runs {
		if v, ok := m.FromSummary(r.Summary); ok && finiteF(v) {
			out = append(out, runValue{r.Run, v})
		}
	}
	return out
}

func finiteF(v float64) bool { return v == v && v-v == 0 }

// cmpCondRow is a condition of the page: its key, each side's value ("unknown" when the side
// does not know it), its source, and how compare judged a difference ("" when equal).
type cmpCondRow struct {
	Key, Base, Cand, Source, Kind, Note string
}

// cmpConditions returns the conditions that differ (compare's own diff, in its order: a key
// compare does not flag is not flagged here) and every condition of both sides.
func cmpConditions(base, cand *record.Header, r *compare.Result) (differ, all []cmpCondRow) {
	known := func(c record.Condition, ok bool) string {
		if !ok || c.Source == conditions.Unknown || c.Value == "" {
			return "unknown"
		}
		return oneLineValue(c.Value)
	}
	kinds := map[string]string{}
	for _, d := range r.Differences {
		kinds[d.Key] = d.Kind
		differ = append(differ, cmpCondRow{Key: d.Key, Base: known(d.Base, d.Base.Source != ""), Cand: known(d.Cand, d.Cand.Source != ""),
			Kind: d.Kind, Note: cmpKindNote[d.Kind]})
	}
	bs := conditions.Merge(conditions.FromHeader(base), base.Conditions)
	cs := conditions.Merge(conditions.FromHeader(cand), cand.Conditions)
	var keys []string
	for _, c := range append(slices.Clone(bs), cs...) {
		if !slices.Contains(keys, c.Key) {
			keys = append(keys, c.Key)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		b, bok := bs.Get(k)
		c, cok := cs.Get(k)
		src := b.Source
		if !bok || src == conditions.Unknown {
			src = c.Source
		}
		all = append(all, cmpCondRow{Key: k, Base: known(b, bok), Cand: known(c, cok), Source: src, Kind: kinds[k]})
	}
	return differ, all
}

// sideWarnings are a side's run warnings, each said once with the runs that gave it, worst
// level first. A warning is one note whatever its figures: the same note of three runs with
// their own figures (a p99 of 11.7, 4.2 and 3.9 ms) and levels (one "may distort", two
// "info") was three notes that read as three problems. The note takes its worst run's level
// and words, and names the runs where it was milder.
func sideWarnings(runs []metrics.RunSummary) []string {
	type seen struct {
		worst  metrics.Warning
		wRun   string
		runs   []string
		texts  map[string]bool
		levels map[metrics.Level][]string // the runs at each level
	}
	var order []*seen
	by := map[string]*seen{}
	for _, r := range runs {
		for _, w := range finiteWarnings(r.Summary.Warnings) {
			run := fmt.Sprint(r.Run + 1) // 1-based, as a person counts runs
			key := warningKind(w.Text)
			s := by[key]
			if s == nil {
				s = &seen{worst: w, wRun: run, texts: map[string]bool{}, levels: map[metrics.Level][]string{}}
				by[key] = s
				order = append(order, s)
			}
			if levelRank(w.Level) < levelRank(s.worst.Level) {
				s.worst, s.wRun = w, run
			}
			s.runs = append(s.runs, run)
			s.texts[w.Text] = true
			s.levels[w.Level] = append(s.levels[w.Level], run)
		}
	}
	slices.SortStableFunc(order, func(a, b *seen) int { return levelRank(a.worst.Level) - levelRank(b.worst.Level) })
	var out []string
	for _, s := range order {
		which := "every run"
		if len(s.runs) < len(runs) {
			which = runsNamed(s.runs)
		}
		if len(s.texts) > 1 {
			which += "; the figures are run " + s.wRun + "'s, the worst"
		}
		for _, l := range []metrics.Level{metrics.Distorts, metrics.Info} {
			if rs := s.levels[l]; l != s.worst.Level && len(rs) > 0 {
				which += fmt.Sprintf("; %s in %s", l, runsNamed(rs))
			}
		}
		line := fmt.Sprintf("%s: %s (%s)", s.worst.Level, s.worst.Text, which)
		if s.worst.Action != "" {
			line += ". Next: " + s.worst.Action
		}
		out = append(out, line)
	}
	return out
}

// runsNamed is "run 2" or "runs 1, 3".
func runsNamed(runs []string) string {
	return cmpPlural(len(runs), "run ", "runs ") + strings.Join(runs, ", ")
}

// figures are the numbers in a warning's text: runs give one warning with their own figures.
var figures = regexp.MustCompile(`[-+]?[0-9][0-9.,]*`)

// warningKind is a warning's text with its figures masked: the same for one warning of
// several runs.
func warningKind(text string) string { return figures.ReplaceAllString(text, "#") }

// sidesSimulated says which sides measured the built-in simulator, for the banner.
func sidesSimulated(sides ...*cmpSide) string {
	var sim []string
	for _, s := range sides {
		for _, r := range s.runs {
			if r.Summary.Simulated || s.header.Target.Simulated {
				sim = append(sim, s.label)
				break
			}
		}
	}
	return simulatedBanner(sim, len(sides))
}

// renderCompareMarkdown is the md format of two inputs: the compare page for a PR comment.
func renderCompareMarkdown(w io.Writer, ins []Input) error {
	for _, in := range ins {
		if isSweep(in.Header) {
			return fmt.Errorf("%s is a sweep: md compares two runs (or two sets of repeats); render each sweep on its own, or both with --format html", in.label())
		}
	}
	base, cand, r, err := comparison(ins, "md")
	if err != nil {
		return err
	}
	return writeLead(w, compareDocument(r, cmpDocSides{baseName: base.label, candName: cand.label, base: base, cand: cand, expect: ins[0].Compare.Expect}).Sections, mdDocument)
}

// levelRank orders warning levels worst first: invalidates, may distort, info.
func levelRank(l metrics.Level) int {
	switch l {
	case metrics.Invalidates:
		return 0
	case metrics.Info:
		return 2
	}
	return 1
}
