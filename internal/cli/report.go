package cli

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"servebench/compare"
	"servebench/internal/output"

	"servebench/record"
	"servebench/report"
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
  servebench report shard-*.jsonl                  # the shards of one split run, merged`

func newReportCmd(st *streams) *cobra.Command {
	var format, out string
	var slice time.Duration
	var threshold float64
	var expect []string
	cmd := &cobra.Command{
		Use:   "report RECORDS.jsonl [MORE.jsonl ...]",
		Short: "Summarise records files (" + strings.Join(report.Formats(), ", ") + ")",
		Long: `Summarise a records file. Several files are merged when they are the shard files of one
split run (run --shard i/n): same workload and configuration, every shard present. With
--format html or md, two files that are not shards are base and candidate: the page states
compare's verdict first, then every metric and every run of both.
Without --format, the extension of -o chooses it (run.html: html), else text.

Formats:
` + formatHelp(),
		Example: reportExamples,
		Args:    someFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := chooseFormat(format, out)
			if err != nil {
				return err
			}
			if slice < minSlice {
				return usageErr("--slice %v: want at least %v", slice, minSlice)
			}
			if !(threshold >= 0 && threshold < 100) { // NaN too
				return usageErr("--threshold %g: want a percentage in [0, 100)", threshold)
			}
			if err := output.NotInput("-o", out, args...); err != nil {
				return codeErr(ExitUsage, err)
			}
			ins, err := openInputs(args, f.Inputs == 2)
			if err != nil {
				return err
			}
			defer ins[len(ins)-1].close()
			rins := make([]report.Input, len(ins))
			for i, in := range ins {
				rins[i] = report.Input{Label: in.label, Header: in.hdr, Records: in.records(st.stderr), Slice: slice}
			}
			rins[0].Compare = compare.Options{Threshold: threshold / 100, Expect: expect}
			if threshold == 0 {
				rins[0].Compare.Threshold = 1e-9 // every significant change counts, as compare does
			}
			return output.WriteFile(out, st.stdout, func(w io.Writer) error { return f.Render(w, rins...) })
		},
	}
	cmd.Flags().StringVar(&format, "format", "", strings.Join(report.Formats(), " | ")+" (default: from the -o extension, else text)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of standard output")
	cmd.Flags().DurationVar(&slice, "slice", report.DefaultSlice, "width of a time slice for --format slices-csv and slices-json")
	cmd.Flags().Float64Var(&threshold, "threshold", 5, "the compare page (two files, html or md): smallest change in percent that counts, as compare's --threshold")
	cmd.Flags().StringArrayVar(&expect, "expect-change", nil, "the compare page: a condition you meant to change, as compare's --expect-change (repeatable)")
	return cmd
}

// minSlice is the narrowest --slice: finer than the clock's useful resolution for per-slice
// percentiles, and a guard against millions of rows.
const minSlice = 10 * time.Millisecond

// chooseFormat is --format, or the format -o's extension names, or text.
func chooseFormat(name, out string) (report.Format, error) {
	if name == "" {
		if f, ok := report.ByExtension(out); ok {
			return f, nil
		}
		name = "text"
	}
	f, ok := report.Lookup(name)
	if !ok {
		return f, usageErr("--format %q: want one of %s", name, strings.Join(report.Formats(), ", "))
	}
	return f, nil
}

// formatHelp lists the formats, one per line.
func formatHelp() string {
	var b strings.Builder
	for _, name := range report.Formats() {
		f, _ := report.Lookup(name)
		fmt.Fprintf(&b, "  %-11s %s\n", f.Name, f.Desc)
	}
	return b.String()
}

// input is one run to report: one records file, or the merged shard files of one run.
type input struct {
	label string
	hdr   *record.Header
	read  func(*record.Record) error // the next record; io.EOF at the end
	where func() string              // the file the last record or error came from
	close func()
}

// openInputs opens the files as runs: one file is one run; several shard files of one run
// are merged into one; with two == true (HTML), two files that are not shards are two runs.
// Anything else is refused with the reason.
func openInputs(paths []string, two bool) ([]*input, error) {
	var files []*os.File
	var srcs []record.Source
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			closeAll()
			return nil, err
		}
		files = append(files, f)
		rd, err := record.NewReader(f)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		srcs = append(srcs, record.Source{Name: p, Reader: rd})
	}
	ins, err := groupInputs(srcs, two)
	if err != nil {
		closeAll()
		return nil, err
	}
	ins[len(ins)-1].close = closeAll // the last input closes every file
	return ins, nil
}

// groupInputs decides how the opened files form runs (see openInputs).
func groupInputs(srcs []record.Source, two bool) ([]*input, error) {
	if len(srcs) == 1 {
		return []*input{single(srcs[0])}, nil
	}
	shards := 0
	for _, s := range srcs {
		if s.Reader.Header().Shard != "" {
			shards++
		}
	}
	if shards == 0 && two && len(srcs) == 2 {
		return []*input{single(srcs[0]), single(srcs[1])}, nil
	}
	if shards == 0 {
		return nil, usageErr("%d files that are not shards of one run: report merges only the shard files of a split run (run --shard i/n); to compare two runs use --format html or md with two files", len(srcs))
	}
	m, err := record.Merge(srcs)
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%d shards merged", len(srcs))
	return []*input{{label: label, hdr: m.Header(), read: m.Read, where: m.Name, close: func() {}}}, nil
}

func single(s record.Source) *input {
	label := strings.TrimSuffix(filepath.Base(s.Name), ".jsonl")
	return &input{label: label, hdr: s.Reader.Header(), read: s.Reader.Read,
		where: func() string { return s.Name }, close: func() {}}
}

// records yields every valid record. Invalid lines (the cut last line of an interrupted run,
// or a corrupt one) are reported on stderr with their file and line number and skipped; a
// file that is not one run (record.RunError) is a usage error; any other error ends the
// sequence.
func (in *input) records(stderr io.Writer) iter.Seq2[*record.Record, error] {
	return func(yield func(*record.Record, error) bool) {
		var rec record.Record
		for {
			err := in.read(&rec)
			if errors.Is(err, io.EOF) {
				return
			}
			var le *record.LineError
			var re *record.RunError
			if errors.As(err, &re) {
				// not one run: bad input, refused (exit 2) rather than pooled
				yield(nil, codeErr(ExitUsage, fmt.Errorf("%s: %w", in.where(), err)))
				return
			}
			if errors.As(err, &le) {
				fmt.Fprintf(stderr, "servebench: %s: skipped %v\n", in.where(), le)
				continue
			}
			if err != nil {
				yield(nil, fmt.Errorf("%s: %w", in.where(), err))
				return
			}
			if !yield(&rec, nil) {
				return
			}
		}
	}
}
