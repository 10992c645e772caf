package report

import (
	"fmt"

	"servebench/metrics"
	"servebench/record"
)

// The validity verdict of a run (package validity), as its run-end line recorded it: a
// section of every format when the run was held to rules.
func init() { RegisterSection("validity", 60, validitySection) }

// validities are the verdicts in a summary's run-end lines (one per run it covers).
func validities(s *metrics.Summary) []*record.Validity {
	var out []*record.Validity
	for i := range s.Ends {
		if v := s.Ends[i].Validity; v != nil {
			out = append(out, v)
		}
	}
	return out
}

// validityHead is "INVALID (mlperf-llama3.1-8b-server)".
func validityHead(v *record.Validity) string {
	return fmt.Sprintf("%s (%s)", v.Verdict, v.Rules)
}

// validityCheck is one rule in a line: "✗ p99 TTFT ≤ 2s (…): 0 of 300 over the limit — p99
// TTFT needs 159 more requests at this over-limit count".
func validityCheck(c record.ValidityCheck) string {
	mark := "✓"
	if !c.Pass {
		mark = "✗"
	}
	out := fmt.Sprintf("%s %s: %s", mark, c.Rule, c.Figure)
	if c.Shortfall != "" {
		out += " — " + c.Shortfall
	}
	return out
}

// validitySection is the verdict and its checks of each run the summary covers, and in JSON
// "validity", the summary's run's (the last of its run-end lines); nothing for a run not held
// to rules.
func validitySection(_ *record.Header, s *metrics.Summary) *Section {
	vs := validities(s)
	if len(vs) == 0 {
		return nil
	}
	sec := &Section{Name: "validity", Title: "Validity", JSON: []Field{{"validity", vs[len(vs)-1]}}}
	for _, v := range vs {
		sec.Lines = append(sec.Lines, Line{"validity", validityHead(v)})
		for _, c := range v.Checks {
			sec.Lines = append(sec.Lines, Line{"", validityCheck(c)})
		}
	}
	return sec
}
