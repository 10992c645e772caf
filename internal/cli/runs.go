package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"servebench/metrics"
	"servebench/record"
)

// printRuns is the one rendering of a file's runs, for `run` and `report` alike: one run is
// its summary; several are a table of every run's key figures, then the last run's summary
// (JSON: the last run's summary only, as `run --json` writes it).
func printRuns(w io.Writer, format string, h *record.Header, runs []metrics.RunSummary) error {
	last := runs[len(runs)-1]
	if len(runs) > 1 && format != "json" {
		if err := runTable(w, runs); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nthe summary below is run %d's (the last); compare and report --format gobench use every run\n\n", last.Run)
	}
	return printSummary(w, format, h, last.Summary)
}

// runTable writes one line of key figures per run.
func runTable(w io.Writer, runs []metrics.RunSummary) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tlabel\tcompleted\tfailed\treq/s\tout tok/s\tTTFT p50\tTTFT p99\tITL p50\tTPOT p50\tE2E p99\t")
	for _, r := range runs {
		s := r.Summary
		label := r.Label
		if label == "" {
			label = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Run, label, s.Completed, s.Failed,
			num(s.RequestThroughput, 2), num(s.OutputThroughput, 0), ms(s.TTFT, 50), ms(s.TTFT, 99),
			ms(s.ITLChunk, 50), ms(s.TPOT, 50), ms(s.E2E, 99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "latencies in ms")
	return err
}

func num(v *float64, prec int) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.*f", prec, *v)
}

func ms(s metrics.Stat, p float64) string {
	v, ok := s.Percentile(p)
	if !ok {
		return "—"
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v/1e6), "0"), ".")
}
