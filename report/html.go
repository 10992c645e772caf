package report

import (
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// Run is one input of an HTML report: its label in legends and tables, its header, summary
// and chart series.
type Run struct {
	Label   string
	Header  *record.Header
	Summary *metrics.Summary
	Series  *Series
	// sweep, for a sweep's file, is its points (runs grouped, warnings grouped, conclusions):
	// the page then shows the per-point table and curves instead of one run's tables and
	// distributions (sweepcharts.go). sweepMode is the header's Sweep.
	sweep     *sweepView
	sweepMode string
	// repeats, for a file of several runs (--repeat) that is not a sweep, is its runs with
	// their own series: the page then shows them as repeats (repeats.go), never pooled.
	repeats *cmpSide
}

//go:embed html.tmpl
var htmlTemplate string

var pageTmpl = template.Must(template.New("page").Funcs(pageFuncs).Parse(htmlTemplate))

// pageFuncs are the HTML templates' functions: wrap, for paths, URLs and condition values.
var pageFuncs = template.FuncMap{"wrap": wrapAtSeparators}

// wrapAtSeparators is s, escaped, with a line-break opportunity after each path separator
// (spaces and hyphens are ones already): a model path in a narrow cell broke mid-word
// ("/models/Qw|en2.5-0.5B") where the cell allowed a break anywhere, and a word too long for
// its cell is still broken (overflow-wrap: break-word), but only as the last resort.
func wrapAtSeparators(s string) template.HTML {
	e := template.HTMLEscapeString(s)
	return template.HTML(strings.NewReplacer("/", "/<wbr>", "\\", "\\<wbr>").Replace(e))
}

// HTML writes a self-contained HTML report of one run, in reading order: the SIMULATED banner,
// the verdict block and the warnings, then the sections of its document (the requests and
// their throughput, failures, latency table and every feature's section), the charts (SVG,
// drawn in Go: see svg.go for why), and last the conditions, folded (a run records dozens). The page
// loads nothing: no script, no font, no image, and a Content-Security-Policy that forbids any
// request, so it opens offline and leaks nothing. Colours follow the reader's light or dark
// preference. h may be nil; series may be nil (the charts are then empty).
func HTML(w io.Writer, h *record.Header, s *metrics.Summary, series *Series) error {
	return HTMLRuns(w, []Run{{Label: "run", Header: h, Summary: s, Series: series}})
}

// HTMLCompare writes one HTML report of two runs, base and candidate, overlaid on the same
// charts and side by side in the tables.
func HTMLCompare(w io.Writer, base, candidate Run) error {
	return HTMLRuns(w, []Run{base, candidate})
}

// HTMLRuns writes the HTML report of one or two runs (base first).
func HTMLRuns(w io.Writer, runs []Run) error {
	if len(runs) == 0 || len(runs) > 2 {
		return errors.New("html report: want one run, or two (base and candidate)")
	}
	for i := range runs {
		if runs[i].Series == nil {
			runs[i].Series = &Series{}
		}
		if runs[i].Summary == nil {
			return errors.New("html report: a run has no summary")
		}
	}
	var svgs []template.HTML
	var plots []htmlPlot
	chartsOf := charts
	for _, r := range runs {
		if r.sweep != nil {
			chartsOf = sweepCharts
		}
	}
	if len(runs) == 1 && runs[0].repeats != nil {
		chartsOf = repeatCharts
	}
	for _, p := range chartsOf(runs) {
		svgs = append(svgs, template.HTML(p.svg())) // built from numbers and escaped text only
		plots = append(plots, htmlPlot{Title: p.title, Note: p.note, SVG: svgs[len(svgs)-1], Wide: p.width() > chartW})
	}
	plots = append(plots, swimlanePlots(runs)...)
	return pageTmpl.Execute(w, pageData(runs, plots))
}

// htmlPlot is one chart in the page.
type htmlPlot struct {
	Title, Note string
	SVG         template.HTML
	Wide        bool // spans the grid's width (the timeline with the server's panels)
}

// page is the template's data.
type page struct {
	Title      string
	Simulated  string   // the SIMULATED banner's words, when any run measured the simulator
	Cautions   []string // why two runs may not be comparable
	Runs       []runInfo
	Two        bool
	Conditions []condRow
	CondDiffer bool // a condition differs between the two runs: the folded table opens
	Plots      []htmlPlot
	Sweeps     []sweepBlock  // the per-point table of each run that is a sweep
	Sections   []htmlSection // the runs' documents' sections (document.go)
	Opening    []htmlSection // the sections that open the page: the verdict block (document.go)
	Repeats    *repeatsBlock // a --repeat file's runs (repeats.go)
}

// sweepBlock is one sweep's per-point table, its note and its conclusions, and the answer
// in one sentence that opens the page.
type sweepBlock struct {
	Label, Class, Unit, Answer string
	Head                       []string
	Rows                       [][]string
	Findings                   []string
}

type runInfo struct {
	Label, Class, Target, API, Model, Start, Version, Hash, Workload, Shard, Command, Load, Achieved string
	Warnings                                                                                         []Footnote
}

type condRow struct {
	Key, Source string
	Values      []string
	Differs     bool
}

func pageData(runs []Run, plots []htmlPlot) page {
	p := page{Two: len(runs) == 2, Plots: plots}
	var sim []string
	for i, r := range runs {
		h := r.Header
		if h == nil {
			h = &record.Header{}
		}
		if r.Summary.Simulated || h.Target.Simulated {
			sim = append(sim, r.Label)
		}
		p.Runs = append(p.Runs, runInfoOf(i, r.Label, h, r.Summary))
	}
	p.Simulated = simulatedBanner(sim, len(runs))
	if len(runs) == 1 && runs[0].repeats != nil {
		p.Repeats = repeatsBlockOf(runs[0].repeats)
	}
	p.Title = "servebench report"
	if m := p.Runs[0].Model; m != "" {
		p.Title += " — " + m
	}
	if p.Two {
		p.Cautions = cautions(runs[0].Header, runs[1].Header)
	}
	for i, r := range runs {
		if r.sweep != nil {
			p.Sweeps = append(p.Sweeps, sweepBlockOf(i, r))
			p.Runs[i].Warnings = footnotes(r.sweep.warnings())
		}
	}
	p.Opening, p.Sections = htmlSections(runs) // document_render.go: the registered sections and breakdowns
	p.Conditions = conditionRows(runs)
	for _, c := range p.Conditions {
		p.CondDiffer = p.CondDiffer || c.Differs
	}
	poolingPlots(&p, runs) // endpoints.go: embeddings and rerank stream nothing
	return p
}

// simulatedBanner says which figures came from the built-in simulator: those of the page, of
// both runs, or of the one run named; empty when none did.
func simulatedBanner(sim []string, runs int) string {
	const what = "measured against servebench's built-in simulator, not a real server"
	switch {
	case len(sim) == 0:
		return ""
	case runs == 1:
		return "these figures were " + what
	case len(sim) == runs:
		return "the figures of both runs were " + what
	}
	return fmt.Sprintf("the figures of %s were %s", sim[0], what)
}

func runInfoOf(i int, label string, h *record.Header, s *metrics.Summary) runInfo {
	ri := runInfo{Label: label, Class: fmt.Sprintf("c%d", i), Target: h.Target.URL, API: h.Target.API,
		Model: h.Target.Model, Version: h.Version, Hash: short(h.Workload.Hash), Shard: h.Shard,
		Command: strings.Join(h.Command, " "), Load: loadLine(h), Achieved: achievedWords(s), Warnings: footnotes(s.Warnings)}
	if !h.Start.IsZero() {
		ri.Start = h.Start.UTC().Format("2006-01-02 15:04:05Z")
	}
	wl := h.Workload
	ri.Workload = fmt.Sprintf("%d requests, %s seed %d, prompt lengths %s", wl.Count, wl.Source, wl.Seed, promptLengths(wl.PromptLengths, s))
	return ri
}

// cautions say when a base and a candidate did not send the same workload or did not measure
// the same kind of target, so that an overlay is not read as a like-for-like comparison.
func cautions(a, b *record.Header) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	if a.Workload.Hash != b.Workload.Hash {
		out = append(out, fmt.Sprintf("the two runs sent different workloads (hash %s vs %s): their requests are not the same", short(a.Workload.Hash), short(b.Workload.Hash)))
	}
	if a.Target.Simulated != b.Target.Simulated {
		out = append(out, "one run measured the built-in simulator and the other a real server")
	}
	return out
}

// renderHTML is the html format: each input read once into its summary and chart series,
// then HTMLRuns. An input of several runs (--repeat) shows its last run in the tables, as the
// text report does; a sweep's input shows its per-point table and curves instead.
func renderHTML(w io.Writer, ins []Input) error {
	if len(ins) == 2 && !isSweep(ins[0].Header) && !isSweep(ins[1].Header) {
		return renderCompareHTML(w, ins) // comparehtml.go: the verdict first
	}
	runs := make([]Run, len(ins))
	for i, in := range ins {
		var series Series
		add := series.Add
		var reps *cmpSide
		if len(ins) == 1 && !isSweep(in.Header) {
			if _, err := metrics.HeaderOptions(in.Header); err == nil { // else in.read says why
				reps = newRepeats(in.label(), in.Header)
				add = func(r *record.Record) { series.Add(r); reps.add(r) }
			}
		}
		per, err := in.read("html", add)
		if err != nil {
			return err
		}
		rs := per.Summaries()
		last := rs[len(rs)-1]
		runs[i] = Run{Label: in.label(), Header: in.Header, Summary: last.Summary, Series: &series}
		switch {
		case isSweep(in.Header):
			runs[i].sweep, runs[i].sweepMode = newSweepView(in.Header, rs), in.Header.Sweep
		case len(rs) > 1:
			runs[i].Label = fmt.Sprintf("%s (all %d runs drawn; tables: run %d, the last)", in.label(), len(rs), last.Run+1)
			if reps != nil {
				reps.runs, runs[i].repeats = rs, reps
			}
		}
	}
	return HTMLRuns(w, runs)
}

// conditionRows lists every condition key of the runs, with each run's value; a key whose
// values differ is marked.
func conditionRows(runs []Run) []condRow {
	var rows []condRow
	index := map[string]int{}
	for i, r := range runs {
		if r.Header == nil {
			continue
		}
		for _, c := range r.Header.Conditions {
			k, ok := index[c.Key]
			if !ok {
				k = len(rows)
				index[c.Key] = k
				rows = append(rows, condRow{Key: c.Key, Source: c.Source, Values: make([]string, len(runs))})
			}
			rows[k].Values[i] = c.Value
		}
	}
	for i := range rows {
		for _, v := range rows[i].Values[1:] {
			rows[i].Differs = rows[i].Differs || v != rows[i].Values[0]
		}
	}
	return rows
}
