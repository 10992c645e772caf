package cli

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"servebench/metrics"
	"servebench/record"
)

// runSummary is the summary of one run of a records file. A file may hold several runs
// (--repeat, sweep points), told apart by Record.Run; pooling them would put the gaps between
// runs into the window and mix different loads, so each gets its own summary.
type runSummary struct {
	run   int
	label string
	sum   *metrics.Summary
}

// perRun accumulates records into one accumulator per run index.
type perRun struct {
	hdr  *record.Header
	accs map[int]*metrics.Accumulator
}

func newPerRun(h *record.Header) *perRun {
	return &perRun{hdr: h, accs: map[int]*metrics.Accumulator{}}
}

// add puts r into its run's accumulator.
func (p *perRun) add(r *record.Record) {
	acc := p.accs[r.Run]
	if acc == nil {
		acc = metrics.NewAccumulator(headerOptions(p.hdr)) // the run's SLOs and window (slo.go)
		acc.SetHeader(p.hdr)
		p.accs[r.Run] = acc
	}
	acc.Add(r)
}

// summaries are the runs in index order, labelled from their run-end lines. A file with no
// record at all still has one (empty) run, so that a summary says "0 completed".
func (p *perRun) summaries() []runSummary {
	if len(p.accs) == 0 {
		p.accs[0] = metrics.NewAccumulator(headerOptions(p.hdr))
		p.accs[0].SetHeader(p.hdr)
	}
	labels := map[int]string{}
	for _, e := range p.hdr.Ends {
		labels[e.Run] = e.Label
	}
	out := make([]runSummary, 0, len(p.accs))
	for run, acc := range p.accs {
		out = append(out, runSummary{run: run, label: labels[run], sum: acc.Summary()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].run < out[j].run })
	return out
}

// printRuns is the one rendering of a file's runs, for `run` and `report` alike: one run is
// its summary; several are a table of every run's key figures, then the last run's summary
// (JSON: the last run's summary only, as `run --json` writes it).
func printRuns(w io.Writer, format string, h *record.Header, runs []runSummary) error {
	last := runs[len(runs)-1]
	if len(runs) > 1 && format != "json" {
		if err := runTable(w, runs); err != nil {
			return err
		}
		fmt.Fprintf(w, "\nthe summary below is run %d's (the last); compare and report --format gobench use every run\n\n", last.run)
	}
	return printSummary(w, format, h, last.sum)
}

// runTable writes one line of key figures per run.
func runTable(w io.Writer, runs []runSummary) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tlabel\tcompleted\tfailed\treq/s\tout tok/s\tTTFT p50\tTTFT p99\tITL p50\tTPOT p50\tE2E p99\t")
	for _, r := range runs {
		s := r.sum
		label := r.label
		if label == "" {
			label = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.run, label, s.Completed, s.Failed,
			num(s.RequestThroughput, 2), num(s.OutputThroughput, 0), ms(s.TTFT, 50), ms(s.TTFT, 99),
			ms(s.ITLChunk, 50), ms(s.TPOT, 50), ms(s.E2E, 99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "latencies in ms")
	return err
}
