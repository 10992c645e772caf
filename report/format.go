package report

import (
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"servebench/compare"
	"strings"
	"time"

	"servebench/metrics"
	"servebench/record"
)

// Format is one output format of `servebench report`: its name (the --format value), the file
// extension that selects it from `-o FILE`, a line of help, and its renderer. The formats are
// the rows of one table, formats below: a new format is one file holding its renderer and one
// line in that table.
type Format struct {
	Name string // --format value
	Ext  string // file extension with its dot: ".html"
	Desc string // one line for --help
	// Inputs is the most inputs the format draws at once: 0 or 1 means one; the HTML page
	// draws two, base and candidate.
	Inputs int
	render func(w io.Writer, ins []Input) error
}

// formats is the registry, in the order of the help text.
var formats = []Format{
	{Name: "text", Ext: ".txt", Desc: "the terminal summary; several runs: a table of runs first", render: renderText},
	{Name: "json", Ext: ".json", Desc: "the summary under vLLM-compatible keys; several runs: the last at the top, every run under \"runs\"", render: renderJSON},
	{Name: "vllm", Ext: ".vllm.json", Desc: "vllm bench serve --save-result --save-detailed JSON, one line per run", render: renderVLLM},
	{Name: "md", Ext: ".md", Desc: "Markdown tables to paste into a pull request or an issue; two inputs: the comparison, verdict first", Inputs: 2, render: renderMarkdown},
	{Name: "csv", Ext: ".csv", Desc: "one row per request, for a spreadsheet", render: renderCSV},
	{Name: "runs-csv", Ext: ".runs.csv", Desc: "one row per run (repeat or sweep point): load, throughput, latency percentiles", render: renderRunsCSV},
	{Name: "slices-csv", Ext: ".slices.csv", Desc: "one row per time slice of --slice width: throughput, TTFT and ITL percentiles over the run", render: renderSlicesCSV},
	{Name: "slices-json", Ext: ".slices.json", Desc: "the time slices of slices-csv as JSON", render: renderSlicesJSON},
	{Name: "html", Ext: ".html", Desc: "one self-contained page with charts; two inputs: base and candidate compared, verdict first", Inputs: 2, render: renderHTML},
	{Name: "gobench", Ext: ".bench", Desc: "one Go benchmark line per run, for benchstat", render: renderGoBench},
	{Name: "otlp-json", Ext: ".otlp.json", Desc: "OpenTelemetry traces (OTLP/JSON): a span per request, its queue, prefill and decode as child spans", render: renderOTLP},
}

// Input is one run to render: one records file, or the merged shard files of one split run.
// Reading the records (opening files, merging shards, reporting skipped lines) is the
// caller's; every format is a function of what it is handed here.
type Input struct {
	// Label names the input in legends and tables (usually the file name); "run" when empty.
	Label string
	// Header is the records file's header. Reading Records may complete it (run-end lines add
	// to Header.Ends, which label the runs), so formats read it after Records. May be nil.
	Header *record.Header
	// Records yields the records in file order. A format reads it at most once; an error it
	// yields ends the rendering with that error.
	Records iter.Seq2[*record.Record, error]
	// Summaries, when not empty, are the input's runs already summarised (the end of `run`,
	// which has them): the formats that need only summaries (text, json, md, gobench) use them
	// and do not read Records, which may then be nil.
	Summaries []metrics.RunSummary
	// Slice is the width of a time slice for the slices formats (0: DefaultSlice).
	Slice time.Duration
	// Compare, on the base input of a two-file page (html, md), is the comparison's
	// threshold and expected changes, as `servebench compare` takes them; its zero value is
	// compare's defaults. Goodput is set by the page itself (both sides' SLOs).
	Compare compare.Options
	// Explain adds, after the text report, the steady check's trace: the rules of
	// metrics.SteadyPolicy that fired, with their figures (run and report --explain).
	Explain bool
}

// Formats returns the format names in the order of the help text.
func Formats() []string { return names(formats, func(f Format) string { return f.Name }) }

// Lookup returns the format called name.
func Lookup(name string) (Format, bool) {
	return find(formats, func(f Format) bool { return f.Name == name })
}

// ByExtension returns the format whose extension ends path (case-insensitive), so that
// `-o run.html` can choose html without --format. The longest match wins, so that
// `-o run.vllm.json` chooses vllm and `-o run.json` json.
func ByExtension(path string) (Format, bool) {
	name := strings.ToLower(filepath.Base(path))
	var best Format
	for _, f := range formats {
		if strings.HasSuffix(name, f.Ext) && len(name) > len(f.Ext) && len(f.Ext) > len(best.Ext) {
			best = f
		}
	}
	return best, best.Ext != ""
}

// Render renders ins in the format called name.
func Render(w io.Writer, name string, ins ...Input) error {
	f, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("unknown format %q: want one of %s", name, strings.Join(Formats(), ", "))
	}
	return f.Render(w, ins...)
}

// Render renders ins, refusing more inputs than the format draws.
func (f Format) Render(w io.Writer, ins ...Input) error {
	if len(ins) == 0 {
		return fmt.Errorf("%s: nothing to render", f.Name)
	}
	if n := max(f.Inputs, 1); len(ins) > n {
		return fmt.Errorf("%s renders %s, not %d: compare two runs with html or md, or with compare",
			f.Name, cmpPlural(n, "one input", fmt.Sprintf("at most %d inputs", n)), len(ins))
	}
	return f.render(w, ins)
}

func (in Input) label() string {
	if in.Label == "" {
		return "run"
	}
	return in.Label
}

// records returns the input's records, or an error naming the format that needs them.
func (in Input) records(format string) (iter.Seq2[*record.Record, error], error) {
	if in.Records == nil {
		return nil, fmt.Errorf("%s: the %s format needs the records, not only summaries: render it from the records file", in.label(), format)
	}
	return in.Records, nil
}

// summaries returns the input's runs: Summaries when given, otherwise its records read into
// metrics.Runs (one accumulator per run, with the options the header asks for).
func (in Input) summaries(format string) ([]metrics.RunSummary, error) {
	if len(in.Summaries) > 0 {
		return in.Summaries, nil
	}
	if in.Records == nil {
		return nil, fmt.Errorf("%s: no run to render (neither records nor summaries)", in.label())
	}
	per, err := in.read(format, nil)
	if err != nil {
		return nil, err
	}
	return per.Summaries(), nil
}

// read reads every record into metrics.Runs, and into also when it is not nil.
func (in Input) read(format string, also func(*record.Record)) (*metrics.Runs, error) {
	recs, err := in.records(format)
	if err != nil {
		return nil, err
	}
	opt, err := metrics.HeaderOptions(in.Header) // the run's SLOs and window
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.label(), err)
	}
	per := metrics.NewRuns(in.Header, opt)
	for r, err := range recs {
		if err != nil {
			return nil, err
		}
		per.Add(r)
		if also != nil {
			also(r)
		}
	}
	return per, nil
}

func names[T any](list []T, name func(T) string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = name(v)
	}
	return out
}

func find[T any](list []T, match func(T) bool) (T, bool) {
	for _, v := range list {
		if match(v) {
			return v, true
		}
	}
	var zero T
	return zero, false
}
