package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// A sweep's file holds one or more runs per point (sweep --repeat) and, after the last, the
// sweep-end line with its conclusions (record.SweepEnd). Every format shows the same three
// things: the per-point table (medians over a point's runs, each point's warnings marked),
// each distinct warning once with the points it applies to, and the conclusions as `sweep`
// printed them. `servebench sweep` prints its table with SweepTable, the code of `report`.

// pointFigure is a column of the per-point table: a heading and the cell of one point.
type pointFigure struct {
	head string
	cell func(p *metrics.PointSummary) string
}

// sweepFigures are the per-point table's columns after the point's runs and load.
var sweepFigures = []pointFigure{
	{"req/s", func(p *metrics.PointSummary) string { return optf(p.Median(reqTput), 2) }},
	{"out tok/s", func(p *metrics.PointSummary) string { return optf(p.Median(outTput), 0) }},
	{"TTFT p50", func(p *metrics.PointSummary) string { return medMS(p, ttftOf, 50) }},
	{"TTFT p99", func(p *metrics.PointSummary) string { return medMS(p, ttftOf, 99) }},
	{"TPOT p50", func(p *metrics.PointSummary) string { return medMS(p, tpotOf, 50) }},
	{"TPOT p99", func(p *metrics.PointSummary) string { return medMS(p, tpotOf, 99) }},
	{"E2E p99", func(p *metrics.PointSummary) string { return medMS(p, e2eOf, 99) }},
	{"failed", func(p *metrics.PointSummary) string { return fmt.Sprint(p.Failed()) }},
}

// sloFigures are the per-point table's SLO columns, shown when the sweep had SLOs.
var sloFigures = []pointFigure{
	{"goodput", func(p *metrics.PointSummary) string { return optf(p.Median(goodputOf), 2) }},
	{"attain", func(p *metrics.PointSummary) string { return pct1(p.Attainment()) }},
}

func reqTput(s *metrics.Summary) *float64    { return s.RequestThroughput }
func outTput(s *metrics.Summary) *float64    { return s.OutputThroughput }
func goodputOf(s *metrics.Summary) *float64  { return s.RequestGoodput }
func ttftOf(s *metrics.Summary) metrics.Stat { return s.TTFT }
func tpotOf(s *metrics.Summary) metrics.Stat { return s.TPOT }
func e2eOf(s *metrics.Summary) metrics.Stat  { return s.E2E }

// userRate is a point's output tokens/s per user: the median request's decode rate,
// (output_tokens − 1) / (E2E − TTFT), the y axis of the curve vLLM and AIPerf draw.
func userRate(s *metrics.Summary) metrics.Stat { return s.DecodeRate }

// medMS is the median over a point's runs of percentile pct of a latency, in ms, or a dash.
func medMS(p *metrics.PointSummary, f func(*metrics.Summary) metrics.Stat, pct float64) string {
	v := p.MedianPct(f, pct)
	if v == nil {
		return dash
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", *v/1e6), "0"), ".")
}

func pct1(v *float64) string {
	if v == nil {
		return dash
	}
	return fmt.Sprintf("%.1f%%", 100**v)
}

// sweepView is what every format shows of a sweep file.
type sweepView struct {
	end    *record.SweepEnd // nil: the file has no sweep-end line (interrupted, or older)
	points []metrics.PointSummary
	groups []metrics.WarningGroup
	marks  []string // per point: the numbers of its warnings, "1,3"
	slo    bool
	repeat bool // some point has more than one run
}

// newSweepView groups the runs of a sweep file into points and their warnings.
func newSweepView(h *record.Header, runs []metrics.RunSummary) *sweepView {
	v := &sweepView{points: metrics.Points(h, runs)}
	if h != nil {
		v.end = h.SweepEnd
	}
	v.groups = metrics.GroupWarnings(v.points)
	v.marks = make([]string, len(v.points))
	for k, g := range v.groups {
		for _, i := range g.Points {
			v.marks[i] += fmt.Sprintf(",%d", k+1)
		}
	}
	for i := range v.marks {
		v.marks[i] = strings.TrimPrefix(v.marks[i], ",")
	}
	for _, p := range v.points {
		v.repeat = v.repeat || len(p.Runs) > 1
		for _, r := range p.Runs {
			v.slo = v.slo || r.Summary.SLO.Any()
		}
	}
	return v
}

// isSweep reports whether a file is a sweep's (its header says so, or it has a sweep-end line).
func isSweep(h *record.Header) bool { return h != nil && (h.Sweep != "" || h.SweepEnd != nil) }

// columns are the per-point table's headings and the cells of each point.
func (v *sweepView) columns() ([]string, [][]string) {
	figs := sweepFigures
	if v.slo {
		figs = append(figs[:len(figs):len(figs)], sloFigures...)
	}
	head := []string{"runs", "load"}
	for _, f := range figs {
		head = append(head, f.head)
	}
	if v.repeat {
		head = append(head, "req/s spread")
	}
	head = append(head, "notes")
	var rows [][]string
	for i := range v.points {
		p := &v.points[i]
		row := []string{runList(p.RunIndexes()), p.Label}
		for _, f := range figs {
			row = append(row, f.cell(p))
		}
		if v.repeat {
			row = append(row, pct1(p.Spread(reqTput)))
		}
		rows = append(rows, append(row, v.marks[i]))
	}
	return head, rows
}

// unitNote says what the table's figures are.
func (v *sweepView) unitNote() string {
	s := "latencies in ms; load is users (closed loop) or arrivals (open loop); notes are the numbered warnings below"
	if v.repeat {
		s += "; figures are medians over each point's runs, attainment the lowest, spread (max − min) / median of req/s"
	}
	return s
}

// warnings are the distinct warnings, each with the points it applies to in its text.
func (v *sweepView) warnings() []metrics.Warning {
	var out []metrics.Warning
	for _, g := range v.groups {
		where := "every point"
		if len(g.Points) < len(v.points) {
			var names []string
			for _, i := range g.Points {
				names = append(names, v.points[i].Label)
			}
			where = strings.Join(names, "; ")
		}
		text := g.Text
		switch {
		case g.Differs && g.Milder:
			text += " (figures of " + v.points[g.Shown].Label + ", the worst; they differ by point, and the level with them)"
		case g.Differs:
			text += " (figures of " + v.points[g.Shown].Label + "; they differ by point)"
		case g.Milder:
			text += " (the worst point's level; milder at others)"
		}
		out = append(out, metrics.Warning{Level: g.Level, Text: where + ": " + text, Action: g.Action})
	}
	return out
}

// SweepTable writes a sweep file's per-point table, its warnings and its conclusions, as
// `servebench sweep` prints them at its end: the text of its sections.
func SweepTable(w io.Writer, h *record.Header, runs []metrics.RunSummary) error {
	var b strings.Builder
	textDocument(&b, sweepSections(h, runs))
	_, err := io.WriteString(w, strings.TrimPrefix(b.String(), "\n"))
	return err
}

// sweepSections are a sweep file's document: the per-point table (medians over a point's
// runs, latencies in ms, the numbers of each point's warnings), each distinct warning once,
// and the conclusions. Their JSON keys: "sweep_points", each point's figures (medians over
// its runs, latencies in ms, its warnings by number), "sweep_warnings", each distinct
// warning once with its points, "sweep_end", the sweep-end line as recorded (null without
// one), and "sweep_findings", the conclusions in words.
func sweepSections(h *record.Header, runs []metrics.RunSummary) []*Section {
	v := newSweepView(h, runs)
	head, rows := v.columns()
	findings := sweepFindings(v.end)
	points := &Section{Name: "sweep", Title: "sweep", Heading: "sweep",
		Tables:    []*Table{{Head: head, Rows: rows, Note: v.unitNote(), Labels: 2}},
		Footnotes: footnotes(v.warnings()), // numbered as the table's notes column numbers them
		JSON:      []Field{{"sweep_points", v.jsonPoints()}, {"sweep_warnings", v.jsonWarnings()}, {"sweep_end", v.end}, {"sweep_findings", findings}},
	}
	// the answer opens the report: for a newcomer, the one line worth reading (answer.go)
	answer := &Section{Name: "sweep-answer", Title: "answer", Lines: []Line{{Label: "answer", Text: answerOf("this server", v.end, v.points)}},
		JSON: []Field{{"sweep_answer", answerOf("this server", v.end, v.points)}}}
	concl := &Section{Name: "sweep-findings", Title: "sweep findings", JSON: []Field{}}
	for i, f := range findings {
		label := ""
		if i == 0 {
			label = "findings"
		}
		concl.Lines = append(concl.Lines, Line{Label: label, Text: f})
	}
	return []*Section{answer, points, concl}
}

// sweepFindings are the sweep's conclusions in words, from its sweep-end line; one line
// saying there are none when the file has no such line.
func sweepFindings(e *record.SweepEnd) []string {
	if e == nil {
		return []string{"no sweep-end line in this file (the sweep did not finish, or an older servebench wrote it): no knee or SLO load recorded"}
	}
	var out []string
	if e.Interrupted {
		out = append(out, "the sweep was interrupted: its conclusions cover the points that finished")
	}
	if e.Withheld != "" {
		return append(out, withheldFindings(e)...)
	}
	for _, p := range e.Points {
		if p.Poor != "" {
			out = append(out, pointName(&p)+": "+p.Poor)
		}
	}
	if e.Knee != nil && e.PeakThroughput != nil {
		out = append(out, fmt.Sprintf("saturation knee: %s (%s req/s, %.0f%% of the peak %.2f req/s)", pointName(e.Knee),
			optf(e.Knee.RequestThroughput, 2), 100*deref(e.Knee.RequestThroughput) / *e.PeakThroughput, *e.PeakThroughput))
	} else if poor := poorPoints(e); poor > 0 {
		out = append(out, fmt.Sprintf("saturation knee: none (%d of %d points poor, the rest completed no request)", poor, len(e.Points)))
	} else {
		out = append(out, "saturation knee: none (no point completed a request)")
	}
	out = append(out, serverRateFindings(e)...)
	if e.SLO == "" {
		return out
	}
	if g := e.MaxGoodput; g != nil {
		out = append(out, fmt.Sprintf("max goodput: %s (%s req/s meeting %s)", pointName(g), optf(g.RequestGoodput, 2), e.SLO))
	}
	return append(out, sloFindings(e)...)
}

// serverRateFindings set the maximum-throughput point's request throughput beside the
// server's own completion rate, where its counters gave one (SweepPoint.ServerThroughput):
// with one request per user the point's window is a few seconds of fill, full batches and
// drain, and the two may part.
func serverRateFindings(e *record.SweepEnd) []string {
	var out []string
	for i := range e.Points {
		p := &e.Points[i]
		if !strings.HasPrefix(p.Label, "throughput (") || p.ServerThroughput == nil || p.RequestThroughput == nil || *p.ServerThroughput <= 0 {
			continue
		}
		d := *p.RequestThroughput / *p.ServerThroughput - 1
		f := fmt.Sprintf("maximum throughput: %s, %.2f req/s completed over its window (first sent → last done); the server's own counter, %.2f req/s between its scrapes inside the window (output tokens ÷ tokens per request): %+.1f%%",
			pointName(p), *p.RequestThroughput, *p.ServerThroughput, 100*d)
		if math.Abs(d) > 0.15 {
			f += "; more than 15% apart: the window's fill and drain, or a server that changed within the point, part them — quote both"
		}
		out = append(out, f)
	}
	return out
}

// withheldFindings say that the sweep's conclusions are withheld, and why: a point its
// warnings invalidate could move any of them.
func withheldFindings(e *record.SweepEnd) []string {
	out := []string{"INVALID sweep: " + e.Withheld}
	what := "saturation knee and peak throughput"
	if e.SLO != "" {
		what = "saturation knee, peak throughput, max goodput and SLO load"
	}
	if e.Unordered != "" {
		return append(out, fmt.Sprintf("%s: withheld (they rest on the points' order by load): sweep again on a quiet machine, with nothing else sending to the server", what))
	}
	return append(out, fmt.Sprintf("%s: withheld (they compare every point, and an INVALID point's figures are not the server's): fix what its notes say and sweep again", what))
}

// poorPoints counts the points whose window did not hold their load.
func poorPoints(e *record.SweepEnd) int {
	n := 0
	for _, p := range e.Points {
		if p.Poor != "" {
			n++
		}
	}
	return n
}

// sloFindings say which load met the SLOs, and when attainment was not monotonic in load.
func sloFindings(e *record.SweepEnd) []string {
	target := fmt.Sprintf("attainment ≥ %.4g%%", 100*e.TargetAttainment)
	var out []string
	miss := func(p *record.SweepPoint) string {
		return fmt.Sprintf("%s (attainment %s)", pointName(p), pct1(p.SLOAttainment))
	}
	if len(e.MetAbove) > 0 {
		above := miss(&e.MetAbove[0])
		if n := len(e.MetAbove) - 1; n > 0 {
			above += fmt.Sprintf(" and %d more", n)
		}
		out = append(out, fmt.Sprintf("SLO attainment is not monotonic in load: %s missed, yet the heavier %s met them; a load that met above a miss is not shown to be served",
			miss(e.FirstMiss), above))
	}
	switch {
	case e.SLOLoad == nil && e.FirstMiss != nil:
		out = append(out, fmt.Sprintf("no load met the SLOs (%s): the lightest, %s, missed", target, miss(e.FirstMiss)))
	case e.SLOLoad == nil:
		out = append(out, fmt.Sprintf("no load met the SLOs (%s)", target))
	case len(e.MetAbove) > 0:
		out = append(out, fmt.Sprintf("highest load whose every lighter tested point also met the SLOs (%s): %s (%s req/s)",
			target, pointName(e.SLOLoad), optf(e.SLOLoad.RequestThroughput, 2)))
	case e.FirstMiss != nil:
		out = append(out, fmt.Sprintf("highest load meeting the SLOs (%s): %s (%s req/s); the next heavier, %s, missed",
			target, pointName(e.SLOLoad), optf(e.SLOLoad.RequestThroughput, 2), miss(e.FirstMiss)))
	default:
		out = append(out, fmt.Sprintf("highest load meeting the SLOs (%s): %s (%s req/s); every tested load met them",
			target, pointName(e.SLOLoad), optf(e.SLOLoad.RequestThroughput, 2)))
	}
	return out
}

// pointName names a point by its runs and load: "run 3, rate 12.5 req/s", "runs 4–5, ...".
func pointName(p *record.SweepPoint) string {
	return fmt.Sprintf("%s %s, %s", map[bool]string{true: "runs", false: "run"}[len(p.Runs) > 1], runList(p.Runs), p.Label)
}

// runList formats run indexes as the 1-based numbers a person reads beside "repeat 1/3":
// "3", "4–5", "1, 4" for indexes 2, 3–4 and 0, 3 (JSON and CSV keep the records' indexes).
func runList(runs []int) string {
	if len(runs) == 0 {
		return dash
	}
	contiguous := true
	for i := 1; i < len(runs); i++ {
		contiguous = contiguous && runs[i] == runs[i-1]+1
	}
	if len(runs) > 1 && contiguous {
		return fmt.Sprintf("%d–%d", runs[0]+1, runs[len(runs)-1]+1)
	}
	s := make([]string, len(runs))
	for i, r := range runs {
		s[i] = fmt.Sprint(r + 1)
	}
	return strings.Join(s, ", ")
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// jsonPoints are the per-point figures of the JSON keys (sweepSections).
func (v *sweepView) jsonPoints() []*object {
	ms := func(p *metrics.PointSummary, f func(*metrics.Summary) metrics.Stat, pct float64) *float64 {
		if x := p.MedianPct(f, pct); x != nil {
			return ptr(*x / 1e6)
		}
		return nil
	}
	var pts []*object
	for i := range v.points {
		p := &v.points[i]
		po := &object{}
		po.set("label", p.Label)
		po.set("runs", p.RunIndexes())
		po.set("concurrency", p.Concurrency)
		po.set("request_rate", p.Rate)
		po.set("request_throughput", p.Median(reqTput))
		po.set("output_throughput", p.Median(outTput))
		po.set("median_ttft_ms", ms(p, ttftOf, 50))
		po.set("p99_ttft_ms", ms(p, ttftOf, 99))
		po.set("median_tpot_ms", ms(p, tpotOf, 50))
		po.set("p99_tpot_ms", ms(p, tpotOf, 99))
		po.set("p99_e2el_ms", ms(p, e2eOf, 99))
		po.set("median_decode_rate_tok_s", p.MedianPct(userRate, 50))
		po.set("failed", p.Failed())
		po.set("request_goodput", p.Median(goodputOf))
		po.set("slo_attainment_pct", pct(p.Attainment()))
		po.set("request_throughput_spread", p.Spread(reqTput))
		po.set("warnings", warningNumbers(v.groups, i))
		pts = append(pts, po)
	}
	return pts
}

// jsonWarnings are the distinct warnings of the JSON keys, each with its points; never null.
func (v *sweepView) jsonWarnings() []*object {
	ws := []*object{}
	for _, g := range v.groups {
		wo := &object{}
		wo.set("text", g.Text)
		wo.set("points", g.Points)
		wo.set("figures_differ", g.Differs)
		ws = append(ws, wo)
	}
	return ws
}

// warningNumbers are the 1-based numbers of the warning groups that apply to point i.
func warningNumbers(groups []metrics.WarningGroup, i int) []int {
	out := []int{}
	for k, g := range groups {
		for _, j := range g.Points {
			if j == i {
				out = append(out, k+1)
			}
		}
	}
	return out
}

// sweepBlockOf is run i's per-point table for the HTML page: the text table's columns with
// each point's offered load and output tokens/s per user.
func sweepBlockOf(i int, r Run) sweepBlock {
	v := r.sweep
	head, rows := v.columns()
	n := len(head)
	head = append(head[:n-1:n-1], "offered req/s", "out tok/s/user", head[n-1])
	for k := range rows {
		p := &v.points[k]
		notes := rows[k][n-1]
		rows[k] = append(rows[k][:n-1:n-1], fmt.Sprintf("%.2f", offeredRate(p)), optf(p.MedianPct(userRate, 50), 1), notes)
	}
	return sweepBlock{Label: r.Label, Class: fmt.Sprintf("c%d", i), Unit: v.unitNote(), Head: head, Rows: rows, Findings: sweepFindings(v.end),
		Answer: answerOf("this server", v.end, v.points)}
}

// sweepLoad is a sweep's load in the load line: its mode and points ("sweep over rate (5
// points × 2 runs)"); without a sweep-end line every run counts as a point.
func sweepLoad(h *record.Header) string {
	if e := h.SweepEnd; e != nil && e.Repeat > 1 {
		return fmt.Sprintf("sweep over %s (%d points × %d runs)", h.Sweep, len(e.Points), e.Repeat)
	} else if e != nil {
		return fmt.Sprintf("sweep over %s (%d points)", h.Sweep, len(e.Points))
	}
	return fmt.Sprintf("sweep over %s (%d points)", h.Sweep, len(h.Ends))
}
