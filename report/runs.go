package report

import (
	"fmt"
	"io"
	"strings"

	"servebench/compare"
	"servebench/metrics"
	"servebench/record"
)

// A records file may hold several runs (--repeat, sweep points). Text and Markdown then show
// a document of the runs (multiDocument: one line of key figures per run, or a sweep's
// points), and below it the last run's full summary, as `run` printed it; JSON holds the last
// run's summary at its top level and every run under "runs" (JSONRuns), as `run --json`
// writes it.

// runFigures are the columns of the run table: a heading and the cell of one run.
var runFigures = []struct {
	head string
	cell func(r metrics.RunSummary) string
}{
	{"run", func(r metrics.RunSummary) string { return fmt.Sprint(r.Run + 1) }}, // 1-based, as "repeat 1/3"
	{"label", func(r metrics.RunSummary) string { return orDash(r.Label) }},
	{"completed", func(r metrics.RunSummary) string { return fmt.Sprint(r.Summary.Completed) }},
	{"failed", func(r metrics.RunSummary) string { return fmt.Sprint(r.Summary.Failed) }},
	{"req/s", func(r metrics.RunSummary) string { return optf(r.Summary.RequestThroughput, 2) }},
	{"out tok/s", func(r metrics.RunSummary) string { return optf(r.Summary.OutputThroughput, 0) }},
	{"TTFT p50", func(r metrics.RunSummary) string { return msTrim(r.Summary.TTFT, 50) }},
	{"TTFT p99", func(r metrics.RunSummary) string { return msTrim(r.Summary.TTFT, 99) }},
	{"ITL p50", func(r metrics.RunSummary) string { return msTrim(r.Summary.ITLChunk, 50) }},
	{"TPOT p50", func(r metrics.RunSummary) string { return msTrim(r.Summary.TPOT, 50) }},
	{"E2E p99", func(r metrics.RunSummary) string { return msTrim(r.Summary.E2E, 99) }},
}

// lastRunNote says whose summary follows the run table.
func lastRunNote(runs []metrics.RunSummary, sweep bool) string {
	notes := ", its notes every run's" // repeatSummary
	if sweep {
		notes = "" // the sweep's table says each point's warnings
	}
	return fmt.Sprintf("the summary below is run %d's (the last)%s; --format json holds every run under \"runs\", and compare and --format gobench use every run", runs[len(runs)-1].Run+1, notes)
}

// runsSections are the sections of a file of several runs, shown before the last run's
// summary: the run table, and each key metric over the runs when known (ds). The JSON summary
// holds every run under "runs" already: they add no key.
func runsSections(runs []metrics.RunSummary, ds []compare.Described) []*Section {
	t := &Table{Note: "latencies in ms", Labels: 2}
	for _, f := range runFigures {
		t.Head = append(t.Head, f.head)
	}
	for _, r := range runs {
		row := make([]string, len(runFigures))
		for i, f := range runFigures {
			row[i] = f.cell(r)
		}
		t.Rows = append(t.Rows, row)
	}
	secs := []*Section{{Name: "runs", Title: "runs", Heading: "runs", Verdicts: repeatVerdict(runs), Tables: []*Table{t}, JSON: []Field{}}}
	if rows := describedRows(ds); rows != nil {
		over := fmt.Sprintf("over the %d runs", len(runs))
		d := &Table{Head: []string{"metric", "geometric mean of the runs [95% interval from this file's runs alone]", "run to run"}, Labels: 1}
		for _, r := range rows {
			d.Rows = append(d.Rows, r[:])
		}
		secs = append(secs, &Section{Name: "over-runs", Title: over, Heading: over, Tables: []*Table{d}, JSON: []Field{}})
	}
	return secs
}

// repeatVerdict opens the run table of runs that disagree beyond their own noise
// (metrics.RepeatCheck) with what disagreed; the notes, whose first it is, say why.
func repeatVerdict(runs []metrics.RunSummary) []Verdict {
	w := metrics.RepeatCheck(runs)
	if w == nil {
		return nil
	}
	_, what, _ := strings.Cut(w.Text, ": ")
	what, _, _ = strings.Cut(what, "; ")
	return []Verdict{{Label: "agreement", Text: "DISAGREE beyond their own noise: " + what + " (the first note says why)", Class: "bad"}}
}

// repeatSummary is the summary shown below the run table of a --repeat file: the last run's,
// with every run's notes (metrics.RepeatNotes: the runs' disagreement first, then each
// warning once with the runs it applies to), so that its quality and validity read the file,
// not one run.
func repeatSummary(h *record.Header, runs []metrics.RunSummary) *metrics.Summary {
	last := runs[len(runs)-1].Summary
	if len(runs) < 2 || isSweep(h) || last == nil {
		return last
	}
	s := *last
	s.Warnings = metrics.RepeatNotes(runs)
	return &s
}

// multiDocument is the document shown before the last run's summary of a file of several
// runs: a sweep's points and conclusions (sweepSections), else the run table; nil for a
// file of one run that is no sweep. Its last section says whose summary follows.
func multiDocument(h *record.Header, runs []metrics.RunSummary, ds []compare.Described) *Document {
	var secs []*Section
	switch {
	case isSweep(h):
		secs = sweepSections(h, runs)
	case len(runs) > 1:
		secs = runsSections(runs, ds)
	default:
		return nil
	}
	last := secs[len(secs)-1]
	last.Notes = append(last.Notes, lastRunNote(runs, isSweep(h)))
	return &Document{Sections: secs}
}

// writeLead writes sections that come before a summary with a renderer of the document
// (textDocument, mdDocument): no blank line opens them, one closes them.
func writeLead(w io.Writer, secs []*Section, render func(*strings.Builder, []*Section)) error {
	var b strings.Builder
	render(&b, secs)
	s := strings.TrimPrefix(b.String(), "\n")
	if !strings.HasSuffix(s, "\n\n") {
		s += "\n"
	}
	_, err := io.WriteString(w, s)
	return err
}

// msTrim formats percentile p of a nanosecond distribution in ms with at most two decimals
// and no trailing zeros, or a dash.
func msTrim(s metrics.Stat, p float64) string {
	v, ok := s.Percentile(p)
	if !ok {
		return dash
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", fin(v/1e6)), "0"), ".")
}
