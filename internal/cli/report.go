package cli

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"servebench/internal/output"

	"servebench/metrics"
	"servebench/record"
	"servebench/report"
)

const reportExamples = `  servebench report baseline.jsonl                 # the summary again, from the records alone
  servebench report baseline.jsonl --format json   # vLLM-compatible JSON keys
  servebench report run.jsonl --format md          # tables to paste into a PR or an issue
  servebench report run.jsonl --format csv -o requests.csv        # one row per request
  servebench report run.jsonl --format html -o run.html           # self-contained, opens offline
  servebench report base.jsonl cand.jsonl --format html -o cmp.html  # base and candidate overlaid
  servebench report shard-*.jsonl                  # the shards of one split run, merged`

// reportFormats are the values of --format.
var reportFormats = []string{"text", "json", "md", "csv", "html", "gobench"}

func newReportCmd(st *streams) *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "report RECORDS.jsonl [MORE.jsonl ...]",
		Short: "Summarise records files (text, JSON, Markdown, CSV or HTML)",
		Long: `Summarise a records file. Several files are merged when they are the shard files of one
split run (run --shard i/n): same workload and configuration, every shard present. With
--format html, two files that are not shards are two runs, drawn as base and candidate.`,
		Example: reportExamples,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !contains(reportFormats, format) {
				return usageErr("--format %q: want one of %s", format, strings.Join(reportFormats, ", "))
			}
			if err := output.NotInput("-o", out, args...); err != nil {
				return codeErr(ExitUsage, err)
			}
			return output.WriteFile(out, st.stdout, func(w io.Writer) error {
				return reportFiles(w, st.stderr, format, args)
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", strings.Join(reportFormats, " | "))
	cmd.Flags().StringVarP(&out, "output", "o", "", "write to this file instead of standard output")
	return cmd
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// reportFiles renders the records files in format to w.
func reportFiles(w, stderr io.Writer, format string, paths []string) error {
	if format == "gobench" && len(paths) == 1 {
		return reportGoBench(w, stderr, paths[0]) // one line per run (compare.go)
	}
	if len(paths) == 1 && format != "csv" && format != "html" {
		h, runs, err := summariseFile(paths[0], stderr)
		if err != nil {
			return err
		}
		return printRuns(w, format, h, runs)
	}
	ins, err := openInputs(paths, format == "html")
	if err != nil {
		return err
	}
	defer ins[len(ins)-1].close()
	switch format {
	case "csv":
		return report.CSV(w, ins[0].hdr, ins[0].records(stderr))
	case "html":
		return htmlReport(w, stderr, ins)
	}
	runs, err := ins[0].runs(stderr)
	if err != nil {
		return err
	}
	return printRuns(w, format, ins[0].hdr, runs)
}

// htmlReport reads each input once into its summary and chart series, and draws them.
func htmlReport(w, stderr io.Writer, ins []*input) error {
	runs := make([]report.Run, len(ins))
	for i, in := range ins {
		var series report.Series
		opt, err := metrics.HeaderOptions(in.hdr)
		if err != nil {
			return fmt.Errorf("%s: %w", in.label, err)
		}
		per := metrics.NewRuns(in.hdr, opt)
		s, err := in.summarise(stderr, func(r *record.Record) { series.Add(r); per.Add(r) })
		if err != nil {
			return err
		}
		runs[i] = report.Run{Label: in.label, Header: in.hdr, Summary: s, Series: &series}
		if rs := per.Summaries(); len(rs) > 1 {
			// several runs (sweep points, repeats): the tables show the last run, as the text
			// report does, and the per-point charts show them all
			runs[i].Summary = rs[len(rs)-1].Summary
			runs[i].Label = fmt.Sprintf("%s (tables: run %d of %d)", in.label, rs[len(rs)-1].Run, len(rs))
			for _, r := range rs {
				label := r.Label
				if label == "" {
					label = fmt.Sprintf("run %d", r.Run)
				}
				runs[i].Points = append(runs[i].Points, report.Point{Label: label, Summary: r.Summary})
			}
		}
	}
	return report.HTMLRuns(w, runs)
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
		return nil, usageErr("%d files that are not shards of one run: report merges only the shard files of a split run (run --shard i/n); to draw two runs over each other use --format html with two files", len(srcs))
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
// or a corrupt one) are reported on stderr with their file and line number and skipped; any
// other error ends the sequence.
func (in *input) records(stderr io.Writer) iter.Seq2[*record.Record, error] {
	return func(yield func(*record.Record, error) bool) {
		var rec record.Record
		for {
			err := in.read(&rec)
			if errors.Is(err, io.EOF) {
				return
			}
			var le *record.LineError
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

// summarise reads every record into an accumulator, and into also when it is not nil.
func (in *input) summarise(stderr io.Writer, also func(*record.Record)) (*metrics.Summary, error) {
	opt, err := metrics.HeaderOptions(in.hdr) // the run's SLOs and window
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.where(), err)
	}
	acc := metrics.NewAccumulator(opt)
	acc.SetHeader(in.hdr)
	for r, err := range in.records(stderr) {
		if err != nil {
			return nil, err
		}
		acc.Add(r)
		if also != nil {
			also(r)
		}
	}
	return acc.Summary(), nil
}

// summariseFile reads a records file, streaming, into one accumulator per run (runs.go).
// Invalid lines (the cut last line of an interrupted run, or a corrupt one) are reported on
// stderr with their line number and skipped; every valid record is used.
func summariseFile(path string, stderr io.Writer) (*record.Header, []metrics.RunSummary, error) {
	ins, err := openInputs([]string{path}, false)
	if err != nil {
		return nil, nil, err
	}
	defer ins[0].close()
	runs, err := ins[0].runs(stderr)
	if err != nil {
		return nil, nil, err
	}
	return ins[0].hdr, runs, nil
}

// runs reads every record into one accumulator per run: a file, or merged shards, of several
// runs (--repeat, sweep points) is summarised run by run, as run printed it.
func (in *input) runs(stderr io.Writer) ([]metrics.RunSummary, error) {
	opt, err := metrics.HeaderOptions(in.hdr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.where(), err)
	}
	per := metrics.NewRuns(in.hdr, opt)
	for r, err := range in.records(stderr) {
		if err != nil {
			return nil, err
		}
		per.Add(r)
	}
	return per.Summaries(), nil
}

// printSummary renders a summary: the one code path for `run` and `report` (text, json, md).
func printSummary(w io.Writer, format string, h *record.Header, s *metrics.Summary) error {
	switch format {
	case "json":
		return report.JSON(w, h, s)
	case "md":
		return report.Markdown(w, h, s)
	}
	return report.Text(w, h, s)
}
