package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"servebench/compare"
	"servebench/conditions"
)

// CompareText renders a comparison for the terminal: condition differences, one row per
// metric (centre, interval, delta or "~", p and n), the verdict, and the warnings as numbered
// footnotes. baseName and candName label the two sides (usually their file names).
func CompareText(w io.Writer, r *compare.Result, baseName, candName string) error {
	var b strings.Builder
	textDocument(&b, compareDocument(r, cmpDocSides{baseName: baseName, candName: candName}).Sections)
	_, err := io.WriteString(w, strings.TrimPrefix(b.String(), "\n"))
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

// cmpPower is a row's power at the threshold: "73% (n≥7 for 80%)".
func cmpPower(p *compare.Power, threshold float64) string {
	if p == nil {
		return dash
	}
	n := "no n" // a threshold of 0: no count of runs detects it
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
		n := "no number of runs per side" // a delta that lies on the threshold
		if r.Decide > 0 {
			n = fmt.Sprintf("about %d runs per side", r.Decide)
		}
		return fmt.Sprintf("%s: the interval of %s straddles the threshold (%s); %s would decide it (80%% power at the deltas seen)%s",
			v, strings.Join(why, ", "), cmpThresholds(r), n, cmpSpread(r))
	}
	return fmt.Sprintf("%s (%s)", v, cmpThresholds(r))
}

// cmpSpread tells whether more runs can decide an inconclusive verdict: the largest run-to-run
// spread of its inconclusive medians and throughputs, and the runs per side that would show an
// unchanged server as no change at it (compare.Spread). At a spread of 1% that is 2 or 3; at
// 20%, 289: then the spread, not the run count, is what to fix. "" when the spread was not
// measured (one run a side).
func cmpSpread(r *compare.Result) string {
	s := r.Spread
	if s == nil {
		return ""
	}
	return fmt.Sprintf("; %s spreads %.1f%% from run to run: were nothing changed, %s would show it within %g%% (less spread, from a machine to itself or pinned cores, or a wider --threshold needs fewer)",
		s.Metric, s.Percent(), s.Runs(), 100*r.Threshold)
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
	o := &object{}
	jsonDocument(o, compareDocument(r, cmpDocSides{baseName: baseName, candName: candName}))
	return writeIndented(w, o) // NaN and ±Inf are null (finite.go)
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
	if need < 0 {
		return fmt.Sprintf("         but on some metric these runs had only %.0f%% power to find a %.4g%% change (--threshold), and no number of runs per side reaches 80%%", 100*low, 100*r.Threshold)
	}
	return fmt.Sprintf("         but on some metric these runs had only %.0f%% power to find a %.4g%% change (--threshold): 80%% needs %d runs per side (run --repeat)", 100*low, 100*r.Threshold, need)
}

// powerOK is the power at the threshold below which a "no significant change" is qualified.
const powerOK = 0.8
