package report

import (
	"fmt"
	"io"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// The verdict block opens a single run's report: before any figure, whether the run was
// steady (metrics' steady-state check), whether it was valid (when held to rules with
// --valid), and the quality of the measurement (its worst warning), each with a class the
// HTML page colours: good, bad or unsure.

// The block is a section that opens the report; its figures are JSON keys already
// (steady_state, validity, warnings), so it adds none.
func init() {
	RegisterSection("run-verdict", -10, func(_ *record.Header, s *metrics.Summary) *Section {
		return &Section{Name: "run-verdict", Verdicts: runVerdicts(s), JSON: []Field{}}
	})
}

// verdictLine is one line of the verdict block.
type verdictLine = Verdict

// runVerdicts returns the block's three lines for a run's summary.
func runVerdicts(s *metrics.Summary) []verdictLine {
	steady := steadyVerdict(s.Steadiness)
	if s.Pooling != nil {
		steady = poolingSteady() // endpoints.go: the check reads streamed figures
	}
	return []verdictLine{steady, validVerdict(s), qualityVerdict(s.Warnings)}
}

func steadyVerdict(st *metrics.Steadiness) verdictLine {
	v := steadyVerdictText(st)
	if st != nil && st.PolicyVersion != "" {
		v.Text += " [policy " + st.PolicyVersion + "]"
		v.Why = metrics.ExplainSteady(st.Why)
	}
	return v
}

// steadyVerdictText is the steady line's words and class.
func steadyVerdictText(st *metrics.Steadiness) verdictLine {
	v := verdictLine{Label: "steady"}
	switch {
	case st == nil:
		v.Text, v.Class = "not checked", "unsure"
	case !st.Tested:
		v.Text, v.Class = "not tested: "+st.Reason, "unsure"
	case st.Steady:
		v.Text, v.Class = fmt.Sprintf("steady: no trend or step in %s (up to %d windows each)%s%s", testedSeries(st, true), st.Windows, untested(st), disturbedNote(st)), "good"
		if st.Disturbance != nil && len(st.Disturbance.Excused) > 0 {
			v.Class = "unsure" // the server was steady; the figures hold the client's disturbance
		}
	case st.Queue != nil:
		v.Text, v.Class = fmt.Sprintf("NOT STEADY: unbounded queueing: in flight or waiting grew %.0f → %.0f, the arrival rate is above the server's capacity (see the warnings)", st.Queue.FromN, st.Queue.ToN), "bad"
	case st.Queueing:
		v.Text, v.Class = "NOT STEADY: unbounded queueing, the arrival rate is above the server's capacity (see the warnings)", "bad"
	case st.Transient != nil:
		v.Text, v.Class = fmt.Sprintf("NOT STEADY: initial transient: the first %d measured requests were %.1f× slower (TTFT p99 %.0f ms with them, %.0f ms without; see the warnings)",
			st.Transient.Requests, st.Transient.Ratio, st.Transient.TTFTP99With, st.Transient.TTFTP99Without), "bad"
	default:
		var ds []string
		for _, d := range st.Drifts {
			ds = append(ds, d.Metric+" "+d.Direction)
		}
		v.Text, v.Class = "NOT STEADY: "+strings.Join(ds, ", ")+" during the window (see the warnings)", "bad"
	}
	return v
}

func validVerdict(s *metrics.Summary) verdictLine {
	if bad := s.Invalid(); len(bad) > 0 {
		// a figure the warnings invalidate holds no conclusion, whatever the rules say
		more := ""
		if len(bad) > 1 {
			more = fmt.Sprintf(" and %d more", len(bad)-1)
		}
		return verdictLine{Label: "valid", Text: fmt.Sprintf("INVALID: %s%s (see the notes); no conclusion rests on these figures", bad[0].Reason(), more), Class: "bad"}
	}
	vs := validities(s)
	if len(vs) == 0 {
		return verdictLine{Label: "valid", Text: "not held to rules (run --valid PRESET to hold it to MLPerf-style rules)", Class: "unsure"}
	}
	v := vs[len(vs)-1]
	class := "good"
	if v.Verdict != "VALID" {
		class = "bad"
	}
	return verdictLine{Label: "valid", Text: validityHead(v), Class: class}
}

// qualityVerdict grades the measurement by its worst warning: good when every warning is
// information, fair when the worst may distort a figure, poor when one invalidates a figure.
func qualityVerdict(ws []metrics.Warning) verdictLine {
	n := map[metrics.Level]int{}
	for _, w := range ws {
		n[w.Level]++
	}
	v := verdictLine{Label: "quality"}
	switch {
	case n[metrics.Invalidates] > 0:
		v.Text, v.Class = fmt.Sprintf("poor: %d %s a figure", n[metrics.Invalidates], cmpPlural(n[metrics.Invalidates], "warning invalidates", "warnings invalidate")), "bad"
	case n[metrics.Distorts] > 0:
		v.Text, v.Class = fmt.Sprintf("fair: %d %s distort a figure", n[metrics.Distorts], cmpPlural(n[metrics.Distorts], "warning may", "warnings may")), "unsure"
	default:
		v.Text, v.Class = "good: no warning beyond information", "good"
	}
	if len(ws) > 0 {
		v.Text += fmt.Sprintf(" (%d %s in all)", len(ws), cmpPlural(len(ws), "warning", "warnings"))
	}
	return v
}

// disturbedNote says what the check did not count for the client's own disturbance.
func disturbedNote(st *metrics.Steadiness) string {
	d := st.Disturbance
	if d == nil || len(d.Excused) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s only in the %d %s in which the client was disturbed, not counted (see the warnings)", strings.Join(d.Excused, ", "), d.Windows, cmpPlural(d.Windows, "window", "windows"))
}

// steadyExplain is the steady check's trace after a run's text report (run and report
// --explain): every rule of metrics.SteadyPolicy that fired, in its order, with its figures.
func steadyExplain(w io.Writer, s *metrics.Summary) error {
	st := s.Steadiness
	if st == nil || st.PolicyVersion == "" {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nwhy steady: the rules of policy %s that fired, in its order (docs/steady-policy.md); → set or cleared a finding\n", st.PolicyVersion)
	for _, l := range metrics.ExplainSteady(st.Why) {
		b.WriteString("  " + l + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
