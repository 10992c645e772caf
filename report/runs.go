package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"servebench/compare"
	"servebench/metrics"
)

// A records file may hold several runs (--repeat, sweep points). Text and Markdown then show
// one line of key figures per run, and below it the last run's full summary, as `run` printed
// it; JSON holds the last run's summary at its top level and every run under "runs"
// (JSONRuns), as `run --json` writes it.

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
func lastRunNote(runs []metrics.RunSummary) string {
	return fmt.Sprintf("the summary below is run %d's (the last); --format json holds every run under \"runs\", and compare and --format gobench use every run", runs[len(runs)-1].Run+1)
}

// textRuns writes the run table for the terminal, right-aligned, each key metric over the
// runs when known (ds), and the note.
func textRuns(w io.Writer, runs []metrics.RunSummary, ds []compare.Described) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	for _, f := range runFigures {
		fmt.Fprintf(tw, "%s\t", f.head)
	}
	fmt.Fprintln(tw)
	for _, r := range runs {
		for _, f := range runFigures {
			fmt.Fprintf(tw, "%s\t", f.cell(r))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprint(w, "latencies in ms\n\n")
	if rows := describedRows(ds); rows != nil {
		fmt.Fprintf(w, "over the %d runs   geometric mean of the runs [95%% interval], run to run\n", len(runs))
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		for _, r := range rows {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", r[0], r[1], r[2])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintf(w, "%s\n\n", lastRunNote(runs))
	return err
}

// mdRuns writes the run table as a Markdown table, each key metric over the runs when known
// (ds), and the note.
func mdRuns(w io.Writer, runs []metrics.RunSummary, ds []compare.Described) error {
	var b strings.Builder
	b.WriteString("### runs (latencies in ms)\n\n|")
	for _, f := range runFigures {
		b.WriteString(" " + f.head + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("--:|", len(runFigures)-2) + "\n")
	for _, r := range runs {
		b.WriteString("|")
		for _, f := range runFigures {
			b.WriteString(" " + mdEsc(f.cell(r)) + " |")
		}
		b.WriteString("\n")
	}
	if rows := describedRows(ds); rows != nil {
		fmt.Fprintf(&b, "\n### over the %d runs\n\n| metric | geometric mean of the runs [95%% interval] | run to run |\n|---|--:|--:|\n", len(runs))
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdEsc(r[0]), mdEsc(r[1]), mdEsc(r[2]))
		}
	}
	fmt.Fprintf(&b, "\n_%s_\n\n", lastRunNote(runs))
	_, err := io.WriteString(w, b.String())
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
