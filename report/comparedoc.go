package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"servebench/compare"
	"servebench/conditions"
)

// A comparison is one document: the two sides, the deliberate changes, the conditions that
// differ, one row per metric, the verdict, each side's runs (when the records were read),
// the servers' own figures and the notes. `servebench compare` renders it as text or JSON,
// `report base cand --format md` as Markdown, with the renderers of a summary's sections.

// cmpDocSides are what a comparison's document knows of its two sides: their names, and,
// when the records were read (report's Markdown), each side's runs and the expected changes
// the verdict was judged with.
type cmpDocSides struct {
	baseName, candName string
	base, cand         *cmpSide // nil: only the result is known (servebench compare)
	expect             []string
	explain            bool // the explain section (compareexplain.go)
}

// compareDocument builds the document of a comparison.
func compareDocument(r *compare.Result, s cmpDocSides) *Document {
	sides := &Section{Name: "compare", Title: "servebench compare: " + cmpHead(r), JSON: compareJSONFields(r, s.baseName, s.candName),
		Lines: []Line{{"base", fmt.Sprintf("%s (%s)", s.baseName, cmpRuns(r.BaseRuns))}, {"candidate", fmt.Sprintf("%s (%s)", s.candName, cmpRuns(r.CandRuns))}, cmpPolicyLine(r)}}
	if s.base != nil {
		if sim := sidesSimulated(s.base, s.cand); sim != "" {
			sides.Verdicts = append(sides.Verdicts, Verdict{Label: "SIMULATED", Text: sim, Class: "bad"})
		}
	}
	secs := []*Section{sides}
	if len(r.Changes) > 0 {
		sec := &Section{Name: "deliberate-changes", Title: "deliberate changes (run --like)", Heading: "deliberate changes (run --like):"}
		for _, c := range r.Changes {
			sec.Lines = append(sec.Lines, Line{Text: fmt.Sprintf("--%s %s → %s", c.Key, cmpValue(c.Base), cmpValue(c.Value))})
		}
		secs = append(secs, sec)
	}
	secs = append(secs, cmpConditionsSection(r.Differences), cmpMetricsSection(r), cmpVerdictSection(r, s))
	if s.explain {
		secs = append(secs, cmpExplainSection(r))
	}
	if s.base != nil {
		secs = append(secs, cmpRunsSection(s.base, s.cand))
	}
	if sec := cmpServerSection(r); sec != nil {
		secs = append(secs, sec)
	}
	if sec := cmpNotesSection(r, s); sec != nil {
		secs = append(secs, sec)
	}
	for _, sec := range secs[1:] {
		if sec.JSON == nil {
			sec.JSON = []Field{} // the first section holds every JSON key
		}
	}
	return &Document{Sections: secs}
}

// sectionNamed is the document's section called name, or nil.
func sectionNamed(d *Document, name string) *Section {
	for _, sec := range d.Sections {
		if sec.Name == name {
			return sec
		}
	}
	return nil
}

// cmpConditionsSection lists the conditions that differ, and how compare judged each.
func cmpConditionsSection(ds []conditions.Difference) *Section {
	if len(ds) == 0 {
		return &Section{Name: "conditions", Title: "conditions", Lines: []Line{{"conditions", "identical"}}}
	}
	t := &Table{Head: []string{"key", "base", "candidate", ""}, Labels: 4}
	for _, d := range ds {
		t.Rows = append(t.Rows, []string{d.Key, cmpValue(d.Base.Value), cmpValue(d.Cand.Value), cmpKindNote[d.Kind]})
	}
	head := fmt.Sprintf("conditions: %d %s", len(ds), cmpPlural(len(ds), "difference", "differences"))
	return &Section{Name: "conditions", Title: head, Heading: head, Tables: []*Table{t}}
}

// powerCol is the power's column in the metrics table.
const powerCol = 5

// powerInforms says whether a row's power tells the reader anything: only an inconclusive
// row's does (how many runs would decide it). Beside a row already decided (improved,
// regressed, equivalent) it was a column of "100% (n≥2 for 80%)" that read as a caveat; it
// is left out there, and the column with it when no row is inconclusive. --format json keeps
// every row's power.
func powerInforms(row compare.Row) bool {
	return row.Change == compare.Inconclusive && row.Power != nil
}

// cmpMetricsSection is one row per metric: each side's centre and interval, the delta or
// "~", p and n, the power at the threshold, and the change when it is not "~".
func cmpMetricsSection(r *compare.Result) *Section {
	ci := 100 * (1 - r.Alpha)
	t := &Table{Head: []string{"metric", "base", "candidate", "delta", "p, n", "power", ""}, Labels: 7,
		Note: fmt.Sprintf("power: the chance these runs find a true %.4g%% change (--threshold), and the runs per side that reach 80%% (docs/metrics.md)", 100*r.Threshold)}
	for _, row := range r.Rows {
		change := ""
		if row.Change != "~" {
			change = row.Change
		}
		if row.Arithmetic {
			change += " (arithmetic means: a run is 0)"
		}
		power := ""
		if powerInforms(row) {
			power = cmpPower(row.Power, r.Threshold)
		}
		t.Rows = append(t.Rows, []string{row.Metric.Name, cmpEstimate(row.Base, row.Metric.Unit), cmpEstimate(row.Cand, row.Metric.Unit),
			cmpDelta(row), cmpPN(row), power, strings.TrimSpace(change)})
	}
	if !slices.ContainsFunc(r.Rows, powerInforms) {
		t.Head, t.Note = slices.Delete(t.Head, powerCol, powerCol+1), ""
		for i := range t.Rows {
			t.Rows[i] = slices.Delete(t.Rows[i], powerCol, powerCol+1)
		}
	}
	head := fmt.Sprintf("metrics: each side's geometric mean of its runs [%.0f%% CI, run-to-run spread pooled over both sides]; delta [%.0f%% CI of the difference] from the runs' spread and each run's requests (two-level t)", ci, ci)
	return &Section{Name: "metrics", Title: "metrics", Heading: head, Tables: []*Table{t},
		Notes: []string{fmt.Sprintf("\"~\": no significant difference; threshold %.4g%%", 100*r.Threshold), sideIntervalNote}}
}

// sideIntervalNote says why a side's interval here is not the one `report` gives the same
// file: both are the geometric mean of its runs, but compare takes the run-to-run spread
// from both sides together (the spread its delta is tested with), and report from the file's
// own runs, floored by each run's own sampling spread (compare.Describe).
const sideIntervalNote = "a side's interval pools both sides' run-to-run spread, as the delta is tested; `servebench report` of one file takes it from that file's runs alone, so the two differ"

// cmpRunsSection is one row per run of each side: repeats as repeats, never pooled.
func cmpRunsSection(base, cand *cmpSide) *Section {
	t := &Table{Head: []string{"side"}, Note: "latencies in ms", Labels: 3}
	for _, s := range []*cmpSide{base, cand} {
		rt := runsSections(s.runs, nil)[0].Tables[0]
		if len(t.Head) == 1 {
			t.Head = append(t.Head, rt.Head...)
		}
		for _, row := range rt.Rows {
			t.Rows = append(t.Rows, append([]string{s.role}, row...))
		}
	}
	return &Section{Name: "every-run", Title: "every run", Heading: "every run", Tables: []*Table{t}}
}

// cmpVerdictSection is the verdict: what decided it, and PROVISIONAL with its reasons; after
// a "no significant change", what the runs could have detected; and, when the page knows the
// flags, the exit code `servebench compare` gives it.
func cmpVerdictSection(r *compare.Result, s cmpDocSides) *Section {
	sec := &Section{Name: "verdict", Title: "verdict", Verdicts: []Verdict{{Label: "verdict", Text: cmpVerdict(r), Class: verdictClass(r.Verdict)}}}
	if p := strings.TrimSpace(cmpSensitivity(r)); p != "" {
		// cmpSensitivity's sentence follows the verdict's: its opening "and" or "but" goes
		class, text := "good", strings.TrimPrefix(p, "and ")
		if rest, ok := strings.CutPrefix(p, "but "); ok {
			class, text = "unsure", rest
		}
		sec.Verdicts = append(sec.Verdicts, Verdict{Label: "power", Text: text, Class: class})
	}
	if s.base != nil {
		sec.Verdicts = append(sec.Verdicts, Verdict{Label: "exit", Text: exitLine(r) + ", " + flagsLine(r, s.expect), Class: verdictClass(r.Verdict)})
	}
	return sec
}

// cmpServerSection sets the servers' own figures beside ours, after the verdict and
// labelled as outside it: they come from bucketed histograms, counters and sampled gauges,
// so no test stands behind them. nil when no side recorded any.
func cmpServerSection(r *compare.Result) *Section {
	if len(r.Server) == 0 {
		return nil
	}
	runs := "one run a side"
	if r.BaseRuns > 1 || r.CandRuns > 1 {
		runs = "median over runs"
	}
	server, ours := splitServerRows(r.Server)
	t := &Table{Head: []string{"figure", "base", "candidate", "change"}, Labels: 4, Note: ours}
	for _, row := range server {
		t.Rows = append(t.Rows, []string{row.Name, cmpServerValue(row.Base, row.Unit), cmpServerValue(row.Cand, row.Unit), serverChange(row)})
	}
	head := fmt.Sprintf("server side (its own telemetry, %s; informational, not part of the verdict):", runs)
	return &Section{Name: "server-side", Title: "server side", Heading: head, Tables: []*Table{t}}
}

// cmpNotesSection are compare's notes, numbered, then (when the records were read) each
// side's run warnings said once. nil when there are none.
func cmpNotesSection(r *compare.Result, s cmpDocSides) *Section {
	notes := finiteNotes(r.Warnings)
	if s.base != nil {
		for _, side := range []*cmpSide{s.base, s.cand} {
			for _, w := range sideWarnings(side.runs) {
				notes = append(notes, side.role+" runs: "+w)
			}
		}
	}
	if len(notes) == 0 {
		return nil
	}
	sec := &Section{Name: "notes", Title: "notes", Heading: "notes"}
	for _, n := range notes {
		sec.Footnotes = append(sec.Footnotes, Footnote{Text: n})
	}
	return sec
}

// compareJSONFields are the comparison's JSON keys, for machines; warnings are a field, NaN
// and ±Inf are null (finite.go).
func compareJSONFields(r *compare.Result, baseName, candName string) []Field {
	type est struct {
		Center float64  `json:"center"`
		Lo     *float64 `json:"lo"`
		Hi     *float64 `json:"hi"`
		N      int      `json:"n"`
	}
	type serverRow struct {
		Figure string   `json:"figure"`
		Unit   string   `json:"unit"`
		Base   *float64 `json:"base"`
		Cand   *float64 `json:"candidate"`
	}
	type row struct {
		Metric      string   `json:"metric"`
		Unit        string   `json:"unit"`
		Base        est      `json:"base"`
		Cand        est      `json:"candidate"`
		Delta       float64  `json:"delta"`
		DeltaLo     *float64 `json:"delta_lo"`
		DeltaHi     *float64 `json:"delta_hi"`
		P           float64  `json:"p"`
		Significant bool     `json:"significant"`
		Change      string   `json:"change"`
		// RunSpreadAssumed: no side had two runs, so the run-to-run spread was assumed.
		RunSpreadAssumed bool `json:"run_spread_assumed,omitempty"`
		// PowerAtThreshold is the chance these runs find a true change of the threshold;
		// RunsNeeded the runs per side that reach 80% there, Decide those that would decide
		// an inconclusive row (0: more than 40).
		PowerAtThreshold *float64 `json:"power_at_threshold,omitempty"`
		RunsNeeded       *int     `json:"runs_needed,omitempty"`
		Decide           *int     `json:"runs_to_decide,omitempty"`
		// NoChangeRuns, where the run-to-run spread was measured, is the runs per side at
		// which an unchanged server would show no change within the threshold (0: none would).
		NoChangeRuns *int    `json:"runs_to_show_no_change,omitempty"`
		Threshold    float64 `json:"threshold"`
		Arithmetic   bool    `json:"arithmetic_means,omitempty"`
		// Why are the rules that fired on the row, in the policy's order (compareexplain.go).
		Why []stepJSON `json:"why"`
	}
	finite := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	e := func(x compare.Estimate) est { return est{x.Center, finite(x.Lo), finite(x.Hi), x.N} }
	var rows []row
	for _, x := range r.Rows {
		rw := row{Metric: x.Metric.Name, Unit: x.Metric.Unit, Base: e(x.Base), Cand: e(x.Cand), Delta: x.Delta, P: x.P,
			DeltaLo: finite(x.DeltaLo), DeltaHi: finite(x.DeltaHi), RunSpreadAssumed: x.Assumed,
			Significant: x.Significant, Change: x.Change, Threshold: x.Threshold, Arithmetic: x.Arithmetic, Why: cmpWhyJSON(x.Why)}
		if p := x.Power; p != nil {
			rw.PowerAtThreshold, rw.RunsNeeded = finite(p.AtThreshold), &p.RunsNeeded
			if x.Change == compare.Inconclusive {
				rw.Decide = &p.Decide
			}
			if !x.Assumed {
				rw.NoChangeRuns = &p.NoChangeRuns
			}
		}
		rows = append(rows, rw)
	}
	o := &object{}
	o.set("policy_version", r.Policy)
	o.set("base", baseName)
	o.set("candidate", candName)
	o.set("verdict", r.Verdict)
	o.set("why", cmpWhyJSON(r.Why)) // the rules that fired on the runs and the verdict
	o.set("method", r.Method)
	o.set("threshold", r.Threshold)
	if r.Verdict == compare.Inconclusive {
		o.set("runs_to_decide", r.Decide)
		if sp := r.Spread; sp != nil {
			// the inconclusive row that spread most from run to run (log SD), and the runs per
			// side that would show an unchanged server as no change at that spread
			o.set("run_spread", struct {
				Metric       string  `json:"metric"`
				RunSD        float64 `json:"run_sd"`
				NoChangeRuns int     `json:"runs_to_show_no_change"`
			}{sp.Metric, sp.RunSD, sp.NoChangeRuns})
		}
	}
	o.set("differences", r.Differences)
	o.set("metrics", rows)
	o.set("warnings", finiteNotes(r.Warnings))
	if len(r.Changes) > 0 {
		o.set("deliberate_changes", r.Changes)
	}
	if len(r.Server) > 0 {
		// the servers' own figures, informational (never in the verdict)
		var server []serverRow
		for _, x := range r.Server {
			server = append(server, serverRow{x.Name, x.Unit, x.Base, x.Cand})
		}
		o.set("server", server)
	}
	o.set("exit_code", r.ExitCode()) // Provisional its reasons (exit 9)
	if len(r.Provisional) > 0 {
		o.set("provisional", r.Provisional)
	}
	if r.Empty != "" {
		o.set("measured_nothing", r.Empty)
	}
	o.set("metrics_tried", r.Metrics)
	o.set("metrics_decided", r.Decided)
	o.set("metrics_inconclusive", r.Undecided)
	o.set("metrics_not_judged", r.Unjudged)
	return o.fields()
}
