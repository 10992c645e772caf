package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"servebench/compare"
	"servebench/metrics"
	"servebench/record"
)

// A --repeat file holds several runs of one workload. Its HTML page shows them as repeats,
// never pooled: a table of each key metric over the runs (the geometric mean of the runs'
// values with its 95% interval, by compare's own method for one side, compare.Describe, and
// a dot per run), a row per run, and its charts one line per run, each run on its own time
// axis. The summary and latency tables below are the last run's, as the text report's are,
// and say so.

// newRepeats starts the repeats view of the file labelled label: gathered beside the pooled
// series, each run's own chart series and the compare side (every measured request's figures
// for the interval). Its runs are set once the file is read (and has two or more).
func newRepeats(label string, h *record.Header) *cmpSide {
	opt, _ := metrics.HeaderOptions(h) // the caller read them already: no error
	if h == nil {
		h = &record.Header{}
	}
	cs := newCmpSide(label, h, opt)
	cs.role = label
	return cs
}

// repeatsBlock is the template's "Repeats" section.
type repeatsBlock struct {
	N, Last int
	CI      int
	Rows    []repeatRow
	RunHead []string
	RunRows [][]string
}

// repeatRow is one key metric over the runs.
type repeatRow struct {
	Name, Estimate, Spread, Width string
	Strip                         template.HTML
}

func repeatsBlockOf(cs *cmpSide) *repeatsBlock {
	b := &repeatsBlock{N: len(cs.runs), Last: cs.runs[len(cs.runs)-1].Run + 1, CI: 95} // 1-based, as a person counts
	ds := compare.Describe(cs.side, compare.Options{})
	for k, text := range describedRows(ds) { // the text report's figures, to the digit
		d, e := ds[k], ds[k].Estimate
		row := repeatRow{Name: text[0], Estimate: text[1], Spread: text[2], Width: dash,
			Strip: template.HTML(stripLanes(d.Metric, []stripLane{{"run", e, metricRunValues(d.Metric, cs.runs)}}))}
		if finiteF(e.Lo) && finiteF(e.Hi) && e.Center > 0 {
			row.Width = fmt.Sprintf("±%.1f%%", 100*(e.Hi-e.Lo)/2/e.Center)
		}
		b.Rows = append(b.Rows, row)
	}
	t := runsSections(cs.runs, nil)[0].Tables[0] // the run table of text and Markdown
	b.RunHead, b.RunRows = t.Head, t.Rows
	return b
}

// repeatCharts are a --repeat file's charts: its distributions and output over time one line
// per run (perRunCharts), then the E2E scatter (with the server's timeline when recorded)
// over the file's one time axis, where the runs follow each other as they ran.
func repeatCharts(runs []Run) []*plot {
	sc := scatterPlot(runs)
	sc.title = "E2E latency per request against send time, every run in the order run"
	sc.note += "; the runs follow each other on the file's one time axis"
	return append(perRunCharts([]*cmpSide{runs[0].repeats}), timeline(runs, sc))
}

// repeatedRuns reads a --repeat file's records through a compare side, so that the text and
// Markdown reports can set each key metric over the runs with its interval (Describe) under
// the table of runs. It does so only for a file whose header says it repeated (--repeat in
// its command, or several workload parts) and only from records (the end of `run` passes
// summaries): a single run's text report keeps to metrics.Runs, which holds no request. nil
// runs means "not read here": the caller reads the summaries as before.
func repeatedRuns(in Input) ([]metrics.RunSummary, []compare.Described, error) {
	h := in.Header
	if len(in.Summaries) > 0 || in.Records == nil || h == nil || isSweep(h) || !repeated(h) {
		return nil, nil, nil
	}
	if _, err := metrics.HeaderOptions(h); err != nil {
		return nil, nil, nil // in.summaries says why
	}
	cs := newRepeats(in.label(), h)
	for r, err := range in.Records {
		if err != nil {
			return nil, nil, err
		}
		cs.add(r)
	}
	runs := cs.side.Runs()
	if len(runs) < 2 {
		return runs, nil, nil // nil when no record: the caller's summaries give the empty run
	}
	return runs, compare.Describe(cs.side, compare.Options{}), nil
}

// repeated reports whether a header's run was repeated (--repeat N or auto).
func repeated(h *record.Header) bool {
	if len(h.Workload.Parts) > 1 {
		return true
	}
	for _, a := range h.Command {
		if a == "--repeat" || strings.HasPrefix(a, "--repeat=") {
			return true
		}
	}
	return false
}

// describedRows are the lines of "over the runs": metric, figure [interval], run to run.
func describedRows(ds []compare.Described) [][3]string {
	var out [][3]string
	for _, d := range ds {
		spread := dash
		if finiteF(d.RunSD) && !d.Assumed {
			spread = fmt.Sprintf("±%.1f%%", 100*math.Expm1(d.RunSD))
		}
		out = append(out, [3]string{d.Metric.Name, cmpEstimate(d.Estimate, d.Metric.Unit), spread})
	}
	return out
}
