package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"servebench/compare"
	"servebench/exitcode"
	"servebench/output"
	"servebench/record"
	"servebench/report"
	"servebench/sweep"
)

const reportExamples = `  servebench report baseline.jsonl                 # the summary again, from the records alone
  servebench report baseline.jsonl --format json   # vLLM-compatible JSON keys
  servebench report run.jsonl --format md          # tables to paste into a PR or an issue
  servebench report run.jsonl --format csv -o requests.csv        # one row per request
  servebench report run.jsonl --format runs-csv -o runs.csv       # one row per run (repeat, sweep point)
  servebench report run.jsonl --format slices-csv --slice 5s      # throughput, TTFT, ITL per 5 s
  servebench report run.jsonl --format html -o run.html           # self-contained, opens offline
  servebench report base.jsonl cand.jsonl --format html -o cmp.html  # compare page: verdict first
  servebench report base.jsonl cand.jsonl --format md              # the same, for a PR comment
  servebench report base.jsonl cand.jsonl -o cmp.html --threshold 3 --expect-change server.version
  servebench report shard-*.jsonl                  # the shards of one split run, merged
  servebench report np.configs.json -o np.html     # a sweep over server configurations`

func newReportCmd(st *streams) *cobra.Command {
	var format, out string
	var slice time.Duration
	var threshold float64
	var expect []string
	var explain bool
	cmd := &cobra.Command{
		Use:   "report RECORDS.jsonl [MORE.jsonl ...]",
		Short: "Summarise records files (" + strings.Join(report.Formats(), ", ") + ")",
		Long: `Summarise a records file. Several files are merged when they are the shard files of one
split run (run --shard i/n): same workload and configuration, every shard present. With
--format html or md, two files that are not shards are base and candidate: the page states
compare's verdict first, then every metric and every run of both. The index of a sweep over
server configurations (STEM.configs.json, sweep --server-cmd) reports every configuration's
sweep, side by side, with the frontier and the pick (text, md or html).
Without --format, the extension of -o chooses it (run.html: html), else text.

Formats:
` + report.FormatHelp(),
		Example: reportExamples,
		Args:    someFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := report.Choose(format, out)
			if err != nil {
				return usageErr("%v", err)
			}
			if slice < minSlice {
				return usageErr("--slice %v: want at least %v", slice, minSlice)
			}
			copt, err := compare.PercentOptions(threshold, 0, expect)
			if err != nil {
				return usageErr("%v", err)
			}
			if err := output.NotInput("-o", out, args...); err != nil {
				return codeErr(exitcode.Usage, err)
			}
			if len(args) == 1 && strings.HasSuffix(args[0], sweep.IndexSuffix) {
				return reportConfigs(st, args[0], f.Name, out) // servers.go
			}
			ins, closeAll, err := record.OpenInputs(args, f.Inputs == 2)
			if err != nil {
				return err
			}
			defer closeAll()
			if len(ins) == 2 {
				if err := compare.CheckExpect(ins[0].Header, ins[1].Header, expect); err != nil {
					return usageErr("%v", err)
				}
			}
			rins := make([]report.Input, len(ins))
			for i, in := range ins {
				rins[i] = report.Input{Label: in.Label, Header: in.Header, Records: in.Records(skipped(st.stderr)), Slice: slice}
			}
			rins[0].Compare, rins[0].Explain = copt, explain
			return output.WriteFile(out, st.stdout, func(w io.Writer) error { return f.Render(w, rins...) })
		},
	}
	cmd.Flags().StringVar(&format, "format", "", strings.Join(report.Formats(), " | ")+" (default: from the -o extension, else text)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of standard output")
	cmd.Flags().DurationVar(&slice, "slice", report.DefaultSlice, "width of a time slice for --format slices-csv and slices-json")
	cmd.Flags().Float64Var(&threshold, "threshold", 5, "the compare page (two files, html or md): smallest change in percent that counts, as compare's --threshold")
	cmd.Flags().BoolVar(&explain, "explain", false, "text: after the summary, the rules of the steady-state check that fired, with their figures (docs/steady-policy.md); JSON carries them always, as steady_state.why")
	cmd.Flags().StringArrayVar(&expect, "expect-change", nil, "the compare page: a condition you meant to change, as compare's --expect-change (repeatable)")
	return cmd
}

// minSlice is the narrowest --slice: finer than the clock's useful resolution for per-slice
// percentiles, and a guard against millions of rows.
const minSlice = 10 * time.Millisecond

// skipped reports an invalid line of a records file (the cut last line of an interrupted run,
// or a corrupt one), which is passed over.
func skipped(stderr io.Writer) func(string, *record.LineError) {
	return func(file string, err *record.LineError) {
		fmt.Fprintf(stderr, "servebench: %s: skipped %v\n", file, err)
	}
}
