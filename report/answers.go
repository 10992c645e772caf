package report

import (
	"fmt"
	"strings"

	"servebench/metrics"
)

// Answers in the reports (metrics.Answers): the accuracy of a run scored against an answer
// key and the share of answers that broke the response format, each with its 95% Wilson
// interval, and a few wrong and invalid answers. A run that judged no answer shows none of it.

// answerLines are the report's lines about answers: label and text, "" labels continuing.
func answerLines(s *metrics.Summary) [][2]string {
	a := s.Answers
	if a == nil {
		return nil
	}
	var out [][2]string
	if a.Accuracy != nil {
		out = append(out, [2]string{"accuracy", fmt.Sprintf("%s [95%% interval %s – %s], %d of %d completed requests answered right (%d wrong)",
			answerPct(a.Accuracy), answerPct(a.AccuracyLo), answerPct(a.AccuracyHi), a.Correct, a.Scored, a.Scored-a.Correct)})
		for _, e := range a.Wrong {
			out = append(out, [2]string{"", fmt.Sprintf("wrong: request %d%s answered %q, want %s", e.ID, runOf(e), e.Answer, e.Expected)})
		}
	}
	if a.InvalidShare != nil {
		out = append(out, [2]string{"schema", fmt.Sprintf("%s invalid [95%% interval %s – %s], %d of %d completed answers broke the response format",
			answerPct(a.InvalidShare), answerPct(a.InvalidLo), answerPct(a.InvalidHi), a.Invalid, a.Checked)})
		for _, e := range a.Violations {
			out = append(out, [2]string{"", fmt.Sprintf("invalid: request %d%s: %s; answered %q", e.ID, runOf(e), e.Violation, e.Answer)})
		}
	}
	if s.SLO.Correct {
		out = append(out, [2]string{"", "goodput counts only requests answered right (--slo correct); a failed request is never right"})
	}
	return out
}

func runOf(e metrics.AnswerExample) string {
	if e.Run == 0 {
		return ""
	}
	return fmt.Sprintf(" (run %d)", e.Run+1)
}

func answerPct(v *float64) string {
	if v == nil {
		return dash
	}
	return fmt.Sprintf("%.1f%%", fin(100**v))
}

// textAnswers writes the answer lines of the text report after a blank line.
func textAnswers(b *strings.Builder, s *metrics.Summary) {
	ls := answerLines(s)
	if len(ls) > 0 {
		b.WriteString("\n")
	}
	for _, l := range ls {
		line(b, l[0], "%s", l[1])
	}
}

// mdAnswers writes the answer lines of the Markdown report as a list.
func mdAnswers(b *strings.Builder, s *metrics.Summary) {
	ls := answerLines(s)
	if len(ls) == 0 {
		return
	}
	b.WriteString("## Answers\n\n")
	for _, l := range ls {
		if l[0] == "" {
			b.WriteString("  - " + mdEsc(l[1]) + "\n")
			continue
		}
		b.WriteString("- **" + l[0] + "** " + mdEsc(l[1]) + "\n")
	}
	b.WriteString("\n")
}

// jsonAnswers adds the answers object: accuracy and its interval, the invalid share and its
// interval, the counts and the examples; nothing for a run that judged no answer.
func jsonAnswers(o *object, s *metrics.Summary) {
	a := s.Answers
	if a == nil {
		return
	}
	ao := &object{}
	ao.set("scored", a.Scored)
	ao.set("correct", a.Correct)
	ao.set("accuracy", a.Accuracy)
	ao.set("accuracy_ci_low", a.AccuracyLo)
	ao.set("accuracy_ci_high", a.AccuracyHi)
	ao.set("schema_checked", a.Checked)
	ao.set("schema_invalid", a.Invalid)
	ao.set("invalid_share", a.InvalidShare)
	ao.set("invalid_ci_low", a.InvalidLo)
	ao.set("invalid_ci_high", a.InvalidHi)
	ao.set("slo_correct", s.SLO.Correct) // goodput counted only right answers (--slo correct)
	ao.set("wrong_examples", orEmpty(a.Wrong))
	ao.set("invalid_examples", orEmpty(a.Violations))
	o.set("answers", ao)
}

func orEmpty(xs []metrics.AnswerExample) []metrics.AnswerExample {
	if xs == nil {
		return []metrics.AnswerExample{}
	}
	return xs
}

// answerSummaryRows are the HTML summary table's answer rows, when a run of the page judged
// answers: accuracy and invalid share with their intervals, and the first wrong or invalid
// answer of each run.
func answerSummaryRows(runs []Run) []tableRow {
	on := false
	for _, r := range runs {
		on = on || r.Summary.Answers != nil
	}
	if !on {
		return nil
	}
	figs := []struct {
		name string
		cell func(a *metrics.Answers) string
	}{
		{"accuracy [95% interval]", func(a *metrics.Answers) string {
			return fmt.Sprintf("%s [%s – %s] (%d / %d)", answerPct(a.Accuracy), answerPct(a.AccuracyLo), answerPct(a.AccuracyHi), a.Correct, a.Scored)
		}},
		{"invalid answers [95% interval]", func(a *metrics.Answers) string {
			return fmt.Sprintf("%s [%s – %s] (%d / %d)", answerPct(a.InvalidShare), answerPct(a.InvalidLo), answerPct(a.InvalidHi), a.Invalid, a.Checked)
		}},
		{"first wrong or invalid answer", func(a *metrics.Answers) string {
			switch {
			case len(a.Violations) > 0:
				e := a.Violations[0]
				return fmt.Sprintf("request %d: %s; answered %q", e.ID, e.Violation, e.Answer)
			case len(a.Wrong) > 0:
				e := a.Wrong[0]
				return fmt.Sprintf("request %d answered %q, want %s", e.ID, e.Answer, e.Expected)
			}
			return dash
		}},
	}
	var rows []tableRow
	for _, f := range figs {
		row := tableRow{Name: f.name}
		for _, r := range runs {
			c := dash
			if a := r.Summary.Answers; a != nil {
				c = f.cell(a)
			}
			row.Cells = append(row.Cells, c)
		}
		rows = append(rows, row)
	}
	return rows
}
