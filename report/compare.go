package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"servebench/compare"
	"servebench/conditions"
	"servebench/record"
)

// CompareText renders a comparison for the terminal: condition differences, one row per
// metric (centre, interval, delta or "~", p and n), the verdict, and the warnings as numbered
// footnotes. baseName and candName label the two sides (usually their file names).
func CompareText(w io.Writer, r *compare.Result, baseName, candName string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "base:      %s (%s)\ncandidate: %s (%s)\n\n", baseName, cmpRuns(r.BaseRuns), candName, cmpRuns(r.CandRuns))
	if len(r.Changes) > 0 {
		b.WriteString("deliberate changes (run --like):\n")
		for _, c := range r.Changes {
			fmt.Fprintf(&b, "  --%s %s → %s\n", c.Key, cmpValue(c.Base), cmpValue(c.Value))
		}
		b.WriteString("\n")
	}
	writeDifferences(&b, r.Differences)
	writeCmpRows(&b, r)
	fmt.Fprintf(&b, "\nverdict: %s\n", cmpVerdict(r))
	if s := cmpSensitivity(r); s != "" {
		b.WriteString(s + "\n")
	}
	writeCmpServer(&b, r)
	if len(r.Warnings) > 0 {
		b.WriteString("\nNotes:\n")
		for i, n := range finiteNotes(r.Warnings) {
			fmt.Fprintf(&b, "  [%d] %s\n", i+1, n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cmpRuns(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

var cmpKindNote = map[string]string{
	conditions.KindBlocking: "NOT COMPARABLE: name it with --expect-change if you meant it",
	conditions.KindExpected: "expected change",
	conditions.KindInfo:     "noted (does not decide comparability)",
	conditions.KindUnknown:  "unknown on one side",
}

func writeDifferences(b *strings.Builder, ds []conditions.Difference) {
	if len(ds) == 0 {
		b.WriteString("conditions: identical\n\n")
		return
	}
	fmt.Fprintf(b, "conditions: %d %s\n", len(ds), cmpPlural(len(ds), "difference", "differences"))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  key\tbase\tcandidate\t")
	for _, d := range ds {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", d.Key, cmpValue(d.Base.Value), cmpValue(d.Cand.Value), cmpKindNote[d.Kind])
	}
	tw.Flush()
	b.WriteString("\n")
}

func cmpPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func cmpValue(v string) string {
	if v == "" {
		return "(unknown)"
	}
	if len(v) > 40 {
		return v[:37] + "..."
	}
	return v
}

func writeCmpRows(b *strings.Builder, r *compare.Result) {
	fmt.Fprintf(b, "metrics: geometric mean of run values [%.0f%% CI]; delta [%.0f%% CI] from the runs' spread and each run's requests (two-level t)\n",
		100*(1-r.Alpha), 100*(1-r.Alpha))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  metric\tbase\tcandidate\tdelta\tp, n\tpower\t")
	for _, row := range r.Rows {
		change := ""
		if row.Change != "~" {
			change = row.Change
		}
		if row.Arithmetic {
			change += " (arithmetic means: a run is 0)"
		}
		for _, o := range row.Outliers {
			change += fmt.Sprintf(" (%s run %d left out)", cmpSideShort(o.Side), o.Run+1)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Metric.Name, cmpEstimate(row.Base, row.Metric.Unit),
			cmpEstimate(row.Cand, row.Metric.Unit), cmpDelta(row), cmpPN(row), cmpPower(row.Power, r.Threshold), change)
	}
	tw.Flush()
	fmt.Fprintf(b, "power: the chance these runs find a true %.4g%% change (--threshold), and the runs per side that reach 80%% (docs/metrics.md)\n", 100*r.Threshold)
}

func cmpSideShort(side string) string {
	if side == "candidate" {
		return "cand"
	}
	return side
}

// cmpPower is a row's power at the threshold: "73% (n≥7 for 80%)".
func cmpPower(p *compare.Power, threshold float64) string {
	if p == nil {
		return dash
	}
	n := fmt.Sprintf("n>%d", compare.MaxRuns)
	if p.RunsNeeded > 0 {
		n = fmt.Sprintf("n≥%d", p.RunsNeeded)
	}
	return fmt.Sprintf("%.0f%% (%s for 80%%)", 100*p.AtThreshold, n)
}

// cmpEstimate is "centre unit [lo, hi]"; an interval end that is unbounded or undefined
// prints as a dash, never ∞.
func cmpEstimate(e compare.Estimate, unit string) string {
	return fmt.Sprintf("%s %s [%s, %s]", cmpNum(e.Center), unit, cmpNum(e.Lo), cmpNum(e.Hi))
}

// num prints 3–4 significant figures, enough to read a 1% change.
func cmpNum(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return dash // an undefined figure or an unbounded interval end
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 10:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// cmpDelta is "~" when not significant, else the delta with its interval: "+98.5% [+80.1%, +118%]".
func cmpDelta(r compare.Row) string {
	if !r.Significant {
		return "~"
	}
	pct := func(v float64) string {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return dash
		}
		return fmt.Sprintf("%+.3g%%", 100*v)
	}
	return fmt.Sprintf("%s [%s, %s]", pct(r.Delta), pct(r.DeltaLo), pct(r.DeltaHi))
}

func cmpPN(r compare.Row) string {
	p := fmt.Sprintf("p=%.3f", fin(r.P))
	if r.P < 0.001 {
		p = "p<0.001"
	}
	if r.Base.N == r.Cand.N {
		return fmt.Sprintf("%s n=%d", p, r.Base.N)
	}
	return fmt.Sprintf("%s n=%d+%d", p, r.Base.N, r.Cand.N)
}

// cmpVerdict is the verdict line: the verdict, what decided it, how many metrics decided it
// and how many did not, and PROVISIONAL with its reasons when a side was not steady or invalid.
func cmpVerdict(r *compare.Result) string {
	line := cmpVerdictOnly(r)
	if r.Verdict == compare.NotComparable || r.Verdict == compare.MeasuredNothing {
		return line
	}
	line += "; " + cmpDecided(r)
	if len(r.Provisional) > 0 {
		line = "PROVISIONAL " + line + "; " + strings.Join(r.Provisional, "; ")
	}
	return line
}

// cmpDecided is "7 of 9 metrics decided, 2 inconclusive" (with the tails not judged and the
// metrics not compared, when there are any).
func cmpDecided(r *compare.Result) string {
	s := fmt.Sprintf("%d of %d metrics decided, %d inconclusive", r.Decided, r.Metrics, r.Undecided)
	if r.Unjudged > 0 {
		s += fmt.Sprintf(", %d not judged (tails at one run a side)", r.Unjudged)
	}
	if n := r.Metrics - r.Decided - r.Undecided - r.Unjudged; n > 0 {
		s += fmt.Sprintf(", %d not compared", n)
	}
	if o := r.OpenTails(); o != "" {
		s += ": " + o
	}
	return s
}

func cmpVerdictOnly(r *compare.Result) string {
	v := strings.ToUpper(r.Verdict)
	var why []string
	switch r.Verdict {
	case compare.MeasuredNothing:
		switch r.Empty {
		case "base", "candidate":
			return fmt.Sprintf("%s: the %s has no completed measured request (every request failed, or every one was warmup): there is nothing to compare", v, r.Empty)
		case "both":
			return fmt.Sprintf("%s: neither side has a completed measured request (every request failed, or every one was warmup): there is nothing to compare", v)
		}
		return fmt.Sprintf("%s: %s", v, r.Empty)
	case compare.NotComparable:
		for _, d := range r.Differences {
			if d.Kind == conditions.KindBlocking {
				why = append(why, d.Key)
			}
		}
		return fmt.Sprintf("%s: %s changed", v, strings.Join(why, ", "))
	case compare.Regressed, compare.Improved:
		for _, row := range r.Rows {
			if row.Change == r.Verdict {
				why = append(why, fmt.Sprintf("%s %+.1f%%", row.Metric.Name, fin(100*row.Delta)))
			}
		}
		line := fmt.Sprintf("%s: %s (%s)", v, strings.Join(why, ", "), cmpThresholds(r))
		if r.Undecided > r.Decided {
			line += "; not a clean result: most metrics could have moved either way by the threshold"
		}
		return line
	case compare.Inconclusive:
		for _, row := range r.Rows {
			if row.Change == compare.Inconclusive {
				why = append(why, row.Metric.Name)
			}
		}
		n := fmt.Sprintf("more than %d runs per side", compare.MaxRuns)
		if r.Decide > 0 {
			n = fmt.Sprintf("about %d runs per side", r.Decide)
		}
		return fmt.Sprintf("%s: the interval of %s straddles the threshold (%s); %s would decide it (80%% power at the deltas seen)",
			v, strings.Join(why, ", "), cmpThresholds(r), n)
	}
	return fmt.Sprintf("%s (%s)", v, cmpThresholds(r))
}

// cmpThresholds is "threshold 5%" or, where a tail row was judged at another, "threshold 5%,
// p99 10%".
func cmpThresholds(r *compare.Result) string {
	s := fmt.Sprintf("threshold %g%%", 100*r.Threshold)
	for _, row := range r.Rows {
		if row.Metric.Tail && row.Threshold != r.Threshold && row.Threshold > 0 {
			return s + fmt.Sprintf(", p99 %g%%", 100*row.Threshold)
		}
	}
	return s
}

// writeCmpServer writes the servers' own figures beside ours, after the verdict and labelled
// as outside it: they come from bucketed histograms, counters and sampled gauges, so no test
// stands behind them.
func writeCmpServer(b *strings.Builder, r *compare.Result) {
	if len(r.Server) == 0 {
		return
	}
	runs := "one run a side"
	if r.BaseRuns > 1 || r.CandRuns > 1 {
		runs = "median over runs"
	}
	server, ours := splitServerRows(r.Server)
	fmt.Fprintf(b, "\nserver side (its own telemetry, %s; informational, not part of the verdict):\n", runs)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  figure\tbase\tcandidate\tchange\t")
	for _, row := range server {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\n", row.Name, cmpServerValue(row.Base, row.Unit), cmpServerValue(row.Cand, row.Unit), serverChange(row))
	}
	tw.Flush()
	if ours != "" {
		fmt.Fprintf(b, "  (%s)\n", ours)
	}
}

// splitServerRows parts the server's own figures from ours that compare sets beside them
// ("servebench TTFT p50"): a client figure in a table of the server's telemetry would read as
// the server's. Ours become one line to set beside the table, said to be the client's.
func splitServerRows(rows []compare.ServerRow) (server []compare.ServerRow, ours string) {
	var parts []string
	for _, row := range rows {
		name, client := strings.CutPrefix(row.Name, "servebench ")
		if !client {
			server = append(server, row)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s (%s)", name, cmpServerValue(row.Base, row.Unit), cmpServerValue(row.Cand, row.Unit), serverChange(row)))
	}
	if len(parts) == 0 {
		return server, ""
	}
	return server, "for reference, servebench's own client-side figures, base → candidate: " + strings.Join(parts, "; ")
}

// serverChange is a server figure's change from base to candidate, or a dash.
func serverChange(row compare.ServerRow) string {
	if row.Base != nil && row.Cand != nil && *row.Base != 0 {
		return fmt.Sprintf("%+.1f%%", fin(100*(*row.Cand / *row.Base - 1)))
	}
	return dash
}

func cmpServerValue(v *float64, unit string) string {
	switch {
	case v == nil:
		return dash
	case unit == "":
		return trimNum(*v)
	case unit == "%":
		return fmt.Sprintf("%.1f%%", fin(*v))
	}
	return cmpNum(*v) + " " + unit
}

// CompareJSON writes a comparison as one JSON object, for machines; warnings are a field.
func CompareJSON(w io.Writer, r *compare.Result, baseName, candName string) error {
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
	type outlierJSON struct {
		Side string  `json:"side"`
		Run  int     `json:"run"`
		Dev  float64 `json:"deviation"`
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
		PowerAtThreshold *float64      `json:"power_at_threshold,omitempty"`
		RunsNeeded       *int          `json:"runs_needed,omitempty"`
		Decide           *int          `json:"runs_to_decide,omitempty"`
		Threshold        float64       `json:"threshold"`
		Arithmetic       bool          `json:"arithmetic_means,omitempty"`
		Outliers         []outlierJSON `json:"outlier_runs,omitempty"`
	}
	finite := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	e := func(x compare.Estimate) est { return est{x.Center, finite(x.Lo), finite(x.Hi), x.N} }
	out := struct {
		Base        string                  `json:"base"`
		Cand        string                  `json:"candidate"`
		Verdict     string                  `json:"verdict"`
		Method      string                  `json:"method"`
		Threshold   float64                 `json:"threshold"`
		Decide      *int                    `json:"runs_to_decide,omitempty"`
		Differences []conditions.Difference `json:"differences"`
		Metrics     []row                   `json:"metrics"`
		Warnings    []string                `json:"warnings"`
		Changes     []record.Change         `json:"deliberate_changes,omitempty"`
		// Server are the servers' own figures, informational (never in the verdict).
		Server []serverRow `json:"server,omitempty"`
		// Exit is the exit code compare gives this result; Provisional its reasons (exit 9).
		Exit        int      `json:"exit_code"`
		Provisional []string `json:"provisional,omitempty"`
		Empty       string   `json:"measured_nothing,omitempty"`
		Tried       int      `json:"metrics_tried"`
		Decided     int      `json:"metrics_decided"`
		Undecided   int      `json:"metrics_inconclusive"`
		Unjudged    int      `json:"metrics_not_judged"`
	}{Base: baseName, Cand: candName, Verdict: r.Verdict, Method: r.Method, Threshold: r.Threshold,
		Differences: r.Differences, Warnings: finiteNotes(r.Warnings), Changes: r.Changes,
		Exit: CompareExit(r), Provisional: r.Provisional, Empty: r.Empty,
		Tried: r.Metrics, Decided: r.Decided, Undecided: r.Undecided, Unjudged: r.Unjudged}
	if r.Verdict == compare.Inconclusive {
		out.Decide = &r.Decide
	}
	for _, x := range r.Server {
		out.Server = append(out.Server, serverRow{x.Name, x.Unit, x.Base, x.Cand})
	}
	for _, x := range r.Rows {
		rw := row{Metric: x.Metric.Name, Unit: x.Metric.Unit, Base: e(x.Base), Cand: e(x.Cand), Delta: x.Delta, P: x.P,
			DeltaLo: finite(x.DeltaLo), DeltaHi: finite(x.DeltaHi), RunSpreadAssumed: x.Assumed,
			Significant: x.Significant, Change: x.Change, Threshold: x.Threshold, Arithmetic: x.Arithmetic}
		for _, o := range x.Outliers {
			rw.Outliers = append(rw.Outliers, outlierJSON{o.Side, o.Run, o.Dev})
		}
		if p := x.Power; p != nil {
			rw.PowerAtThreshold, rw.RunsNeeded = finite(p.AtThreshold), &p.RunsNeeded
			if x.Change == compare.Inconclusive {
				rw.Decide = &p.Decide
			}
		}
		out.Metrics = append(out.Metrics, rw)
	}
	return writeIndented(w, out) // NaN and ±Inf are null (finite.go)
}

// cmpSensitivity says, after a "no significant change", what the runs could have detected:
// the lowest power at the threshold among the metrics, and the runs per side for 80%.
func cmpSensitivity(r *compare.Result) string {
	if r.Verdict != compare.NoChange {
		return ""
	}
	low, need := 1.0, 0
	for _, row := range r.Rows {
		if row.Power == nil {
			continue
		}
		low = min(low, row.Power.AtThreshold)
		if row.Power.RunsNeeded == 0 {
			need = -1
		} else if need >= 0 {
			need = max(need, row.Power.RunsNeeded)
		}
	}
	if low >= powerOK {
		return fmt.Sprintf("         and these runs had at least %.0f%% power to find a %.4g%% change on every metric", 100*low, 100*r.Threshold)
	}
	more := fmt.Sprintf("more than %d", compare.MaxRuns)
	if need > 0 {
		more = fmt.Sprint(need)
	}
	return fmt.Sprintf("         but on some metric these runs had only %.0f%% power to find a %.4g%% change (--threshold): 80%% needs %s runs per side (run --repeat)", 100*low, 100*r.Threshold, more)
}

// powerOK is the power at the threshold below which a "no significant change" is qualified.
const powerOK = 0.8
