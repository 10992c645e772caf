package report

import (
	"fmt"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// The validity verdict of a run (package validity), as its run-end line recorded it: every
// format prints it when the run was held to rules.

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

func textValidity(b *strings.Builder, s *metrics.Summary) {
	for _, v := range validities(s) {
		b.WriteString("\n")
		line(b, "validity", "%s", validityHead(v))
		for _, c := range v.Checks {
			line(b, "", "%s", validityCheck(c))
		}
	}
}

func mdValidity(b *strings.Builder, s *metrics.Summary) {
	for _, v := range validities(s) {
		fmt.Fprintf(b, "**Validity: %s**\n\n", mdEsc(validityHead(v)))
		for _, c := range v.Checks {
			fmt.Fprintf(b, "- %s\n", mdEsc(validityCheck(c)))
		}
		b.WriteString("\n")
	}
}

// htmlValidity is the verdict and its checks as lines for the page.
func htmlValidity(s *metrics.Summary) []string {
	var out []string
	for _, v := range validities(s) {
		out = append(out, "Validity: "+validityHead(v))
		for _, c := range v.Checks {
			out = append(out, validityCheck(c))
		}
	}
	return out
}
