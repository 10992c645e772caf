package report

import (
	_ "embed"
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"strings"

	"servebench/compare"
)

//go:embed compare.tmpl
var compareTemplate string

var comparePageTmpl = template.Must(template.New("compare").Funcs(pageFuncs).Parse(compareTemplate))

// pageStyle is the single-run page's style sheet, which the compare page shares so that both
// read alike (colours, tables, charts, light and dark).
var pageStyle = template.CSS(between(htmlTemplate, "<style>", "</style>"))

func between(s, open, close string) string {
	_, after, _ := strings.Cut(s, open)
	in, _, _ := strings.Cut(after, close)
	return in
}

// cmpHTML is the compare page template's data.
type cmpHTML struct {
	Title, Simulated                         string
	Style                                    template.CSS
	Verdict, VerdictClass, VerdictLine, Exit string
	Sensitivity, Method, Threshold           string
	CI                                       int
	ShowPower                                bool // some row's power informs (powerInforms)
	Sides                                    []cmpSideInfo
	Rows                                     []cmpHTMLRow
	RunHead                                  []string
	RunRows                                  []cmpRunRow
	Plots                                    []htmlPlot
	Differ, All                              []cmpCondRow
	Notes                                    []string
	Server                                   []cmpServerRow
	ServerOurs                               string // our figures to set beside the server's (splitServerRows)
	Changes                                  []string
	// Policy and Why are the policy's version and the explain section's table: the rules
	// that fired on each metric and on the verdict, shown on demand (compareexplain.go).
	Policy string
	Why    *Table
}

// cmpSideInfo is one side's line in "what was compared".
type cmpSideInfo struct {
	Role, Label, Class, Runs, Target, API, Model, Start, Hash, Workload, Load string
	Warnings                                                                  []string
}

// cmpHTMLRow is one key metric: compare's figures and a strip of every run's value.
type cmpHTMLRow struct {
	Name, Base, Cand, Delta, PN, Power, Change, Class string
	Strip                                             template.HTML
}

// cmpRunRow is one run of one side in the table of every run.
type cmpRunRow struct {
	Side, Class string
	Cells       []string
}

// cmpServerRow is a server figure of both sides (compare.ServerRow), informational.
type cmpServerRow struct{ Name, Base, Cand, Change string }

// renderCompareHTML is the html format of two inputs that are not sweeps: the compare page.
func renderCompareHTML(w io.Writer, ins []Input) error {
	base, cand, r, err := comparison(ins, "html")
	if err != nil {
		return err
	}
	class := verdictClass(r.Verdict)
	if len(r.Provisional) > 0 {
		class = "unsure" // a provisional improvement is no green light
	}
	p := cmpHTML{Style: pageStyle, Verdict: cmpHead(r), VerdictClass: class,
		VerdictLine: verdictWhy(r), Exit: exitLine(r) + ", " + flagsLine(r, ins[0].Compare.Expect), Sensitivity: strings.TrimSpace(cmpSensitivity(r)),
		Method: r.Method, CI: int(math.Round(100 * (1 - r.Alpha))), Threshold: fmt.Sprintf("%.4g%%", 100*r.Threshold)}
	p.Title = fmt.Sprintf("servebench compare — %s vs %s", base.label, cand.label)
	p.Simulated = sidesSimulated(base, cand)
	for i, s := range []*cmpSide{base, cand} {
		p.Sides = append(p.Sides, cmpSideInfoOf(i, s))
	}
	// the figures of the comparison's document, to the digit; the strips and charts are the page's own
	doc := compareDocument(r, cmpDocSides{baseName: base.label, candName: cand.label, base: base, cand: cand, expect: ins[0].Compare.Expect})
	metricCells := sectionNamed(doc, "metrics").Tables[0].Rows
	p.Policy, p.Why = r.Policy, cmpExplainSection(r).Tables[0]
	p.ShowPower = len(sectionNamed(doc, "metrics").Tables[0].Head) > powerCol+1
	for k, row := range r.Rows {
		p.Rows = append(p.Rows, cmpHTMLRowOf(row, metricCells[k], metricRunValues(row.Metric, base.runs), metricRunValues(row.Metric, cand.runs)))
	}
	runs := sectionNamed(doc, "every-run").Tables[0]
	p.RunHead = runs.Head
	for k, cells := range runs.Rows {
		class := "c0"
		if k >= len(base.runs) {
			class = "c1"
		}
		p.RunRows = append(p.RunRows, cmpRunRow{Side: cells[0], Class: class, Cells: cells[1:]})
	}
	for _, pl := range compareCharts(base, cand) {
		p.Plots = append(p.Plots, htmlPlot{Title: pl.title, Note: pl.note, SVG: template.HTML(pl.svg())})
	}
	p.Differ, p.All = cmpConditions(base.header, cand.header, r)
	p.Notes = finiteNotes(r.Warnings)
	if sec := sectionNamed(doc, "deliberate-changes"); sec != nil {
		for _, l := range sec.Lines {
			p.Changes = append(p.Changes, l.Text)
		}
	}
	if sec := sectionNamed(doc, "server-side"); sec != nil {
		for _, c := range sec.Tables[0].Rows {
			p.Server = append(p.Server, cmpServerRow{c[0], c[1], c[2], c[3]})
		}
		p.ServerOurs = sec.Tables[0].Note
	}
	return comparePageTmpl.Execute(w, p)
}

func cmpSideInfoOf(i int, s *cmpSide) cmpSideInfo {
	ri := runInfoOf(i, s.label, s.header, s.runs[len(s.runs)-1].Summary)
	return cmpSideInfo{Role: s.role, Label: s.label, Class: ri.Class, Runs: cmpRuns(len(s.runs)), Target: ri.Target, API: ri.API, Model: ri.Model,
		Start: ri.Start, Hash: ri.Hash, Workload: ri.Workload, Load: ri.Load, Warnings: sideWarnings(s.runs)}
}

// cmpHTMLRowOf is a metric's row: its cells of the document's metrics table (metric, base,
// candidate, delta, p and n, power), its change in words and a strip of every run's value.
func cmpHTMLRowOf(row compare.Row, cells []string, bv, cv []runValue) cmpHTMLRow {
	change := row.Change
	if change == "~" {
		change = "~ no significant change"
	}
	power := "" // the document leaves the column out when no row's power informs
	if len(cells) > powerCol+1 {
		power = cells[powerCol]
	}
	return cmpHTMLRow{Name: cells[0], Base: cells[1], Cand: cells[2], Delta: cells[3], PN: cells[4], Power: power,
		Change: change, Class: changeClass(row.Change), Strip: template.HTML(stripSVG(row, bv, cv))}
}

// Strip geometry: one lane per side, a dot per run, the side's interval as a bar with its
// centre (the geometric mean of the runs) as a tick.
const (
	stripW, stripH, stripPad = 180.0, 50.0, 8.0
	stripDot                 = 4.0
)

// stripSVG draws every run's value of a metric on one axis, base above candidate, each side's
// interval (compare's) under its dots. Each dot carries data-side and data-run, so that a test
// can count the runs drawn.
func stripSVG(row compare.Row, bv, cv []runValue) string {
	return stripLanes(row.Metric, []stripLane{{"base", row.Base, bv}, {"candidate", row.Cand, cv}})
}

// stripLane is one side of a strip: its name, its interval and its runs' values.
type stripLane struct {
	name string
	e    compare.Estimate
	vals []runValue
}

// stripLanes draws the lanes of a strip (one for a --repeat file, two for a comparison), one
// above the other on a shared axis.
func stripLanes(m compare.Metric, lanes []stripLane) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range lanes {
		for _, v := range l.vals {
			lo, hi = math.Min(lo, v.V), math.Max(hi, v.V)
		}
		for _, v := range []float64{l.e.Lo, l.e.Hi, l.e.Center} {
			if finiteF(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if !(hi > lo) { // one value, or none
		lo, hi = lo-math.Max(math.Abs(lo)*0.01, 1e-9), hi+math.Max(math.Abs(hi)*0.01, 1e-9)
	}
	if !finiteF(lo) || !finiteF(hi) {
		lo, hi = 0, 1
	}
	pad := (hi - lo) * 0.06
	lo, hi = lo-pad, hi+pad
	sx := func(v float64) float64 { return stripPad + (v-lo)/(hi-lo)*(stripW-2*stripPad) }
	height := stripH - 18*float64(2-len(lanes))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="strip lanes%d" data-metric="%s" viewBox="0 0 %g %g" role="img" aria-label="%s: every run's value">`,
		len(lanes), html.EscapeString(m.Name), stripW, height, html.EscapeString(m.Name))
	for i, side := range lanes {
		y := 12 + 18*float64(i)
		if finiteF(side.e.Lo) && finiteF(side.e.Hi) {
			fmt.Fprintf(&b, `<line class="ci s%d" x1="%.1f" y1="%g" x2="%.1f" y2="%g"><title>%s %.0f%% interval: %s</title></line>`,
				i, sx(side.e.Lo), y, sx(side.e.Hi), y, side.name, 95.0, html.EscapeString(cmpEstimate(side.e, m.Unit)))
		}
		if finiteF(side.e.Center) {
			fmt.Fprintf(&b, `<line class="centre s%d" x1="%.1f" y1="%g" x2="%.1f" y2="%g"/>`, i, sx(side.e.Center), y-7, sx(side.e.Center), y+7)
		}
		for k, v := range side.vals {
			dy := float64(k%3-1) * 2.5 // runs with close values stay apart
			fmt.Fprintf(&b, `<circle class="repeat f%d" data-side="%s" data-run="%d" cx="%.1f" cy="%.1f" r="%g"><title>%s run %d: %s %s</title></circle>`,
				i, side.name, v.Run, sx(v.V), y+dy, stripDot, side.name, v.Run+1, cmpNum(v.V), html.EscapeString(m.Unit))
		}
	}
	fmt.Fprintf(&b, `<text class="tick" x="%g" y="%g">%s</text>`, stripPad, height-2, cmpNum(lo+pad))
	fmt.Fprintf(&b, `<text class="tick" x="%g" y="%g" text-anchor="end">%s %s</text>`, stripW-stripPad, height-2, cmpNum(hi-pad), html.EscapeString(m.Unit))
	b.WriteString("</svg>")
	return b.String()
}

// compareCharts are the distributions of both sides, one line per run (never pooled), and
// each run's output tokens per second over its own time: a run's repeats are not a sweep, so
// no line joins one run to the next.
func compareCharts(base, cand *cmpSide) []*plot {
	return perRunCharts([]*cmpSide{base, cand})
}

// perRunCharts draws the sides' distributions and output over time, one line per run, each
// run its own colour of its side's family and its own legend entry.
func perRunCharts(sides []*cmpSide) []*plot {
	dists := func(pick func(*Series) []float64) []dist {
		var out []dist
		for i, s := range sides {
			for k, run := range s.runs {
				tone, dashed := runStyle(k)
				out = append(out, dist{run: i, tone: tone, dashed: dashed, label: runLabel(s, k),
					vals: pick(s.seriesOf(run.Run))})
			}
		}
		return out
	}
	ttft := cdfPlot("ttft-cdf", "TTFT distribution (CDF), one line per run", "TTFT (ms)", dists(func(s *Series) []float64 { return msVals(&s.ttft) }))
	itl := cdfPlot("itl-cdf", "ITL (chunk) distribution (CDF), one line per run", "ITL (ms)", dists(func(s *Series) []float64 { return msVals(&s.itlChunk) }))
	e2e := cdfPlot("e2e-cdf", "E2E latency distribution (CDF), one line per run", "E2E (ms)", dists(e2eVals))
	var span int64
	for _, s := range sides {
		for _, run := range s.runs {
			span = max(span, s.seriesOf(run.Run).span())
		}
	}
	w := bucketTicks(span)
	tok := &plot{id: "tokens-time", title: "Output tokens per second, one line per run",
		note: "each run on its own time axis, from its first measured send (its warmup before 0)" + bucketNote(w), xLabel: "time (s since the run's first measured send)", yLabel: "output tokens/s"}
	for i, s := range sides {
		for k, run := range s.runs {
			se := s.seriesOf(run.Run)
			pts := se.overTime(se.tokens, w)
			for _, pt := range pts {
				tok.x0, tok.x1, tok.y1 = min(tok.x0, pt[0]), max(tok.x1, pt[0]), max(tok.y1, pt[1]*1.1)
			}
			tone, dashed := runStyle(k)
			tok.marks = append(tok.marks, mark{kind: markLine, run: i, tone: tone, dashed: dashed, label: runLabel(s, k), pts: pts})
		}
	}
	return []*plot{ttft, itl, e2e, tok}
}

// runLabel is the legend entry of the side's k-th run: the side and the run's 1-based number
// in the file ("base run 2"), or the side alone when it has one run.
func runLabel(s *cmpSide, k int) string {
	if len(s.runs) == 1 {
		return s.role
	}
	return fmt.Sprintf("%s run %d", s.role, s.runs[k].Run+1)
}

// seriesOf is run's chart series (empty when it had no measured record).
func (s *cmpSide) seriesOf(run int) *Series {
	if se := s.series[run]; se != nil {
		return se
	}
	return &Series{}
}

// e2eVals are the E2E latencies (ms, sorted) of the series' scatter sample.
func e2eVals(s *Series) []float64 {
	var r reservoir
	for _, p := range s.points {
		r.vals = append(r.vals, p[1])
	}
	return msVals(&r)
}

// verdictWhy is compare's verdict line without the verdict word the page shows above it.
func verdictWhy(r *compare.Result) string {
	line := cmpVerdict(r)
	if why, ok := strings.CutPrefix(line, cmpHead(r)+": "); ok {
		return why
	}
	return strings.TrimSpace(strings.TrimPrefix(line, cmpHead(r)))
}

// cmpHead is the verdict in capitals, "PROVISIONAL " before it when a side was not steady or
// invalid.
func cmpHead(r *compare.Result) string {
	if len(r.Provisional) > 0 {
		return "PROVISIONAL " + strings.ToUpper(r.Verdict)
	}
	return strings.ToUpper(r.Verdict)
}
