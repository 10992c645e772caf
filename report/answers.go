package report

import (
	"fmt"

	"servebench/metrics"
	"servebench/record"
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

func init() { RegisterSection("answers", 12, answersSection) }

// answersSection is the answer lines and the JSON "answers" object; nil for a run that
// judged no answer.
func answersSection(_ *record.Header, s *metrics.Summary) *Section {
	if s.Answers == nil {
		return nil
	}
	sec := &Section{Name: "answers", Title: "Answers", JSON: []Field{{"answers", answersJSON(s)}}}
	for _, l := range answerLines(s) {
		sec.Lines = append(sec.Lines, Line{Label: l[0], Text: l[1]})
	}
	return sec
}

// answersJSON is the answers object: accuracy and its interval, the invalid share and its
// interval, the counts and the examples; nothing for a run that judged no answer.
func answersJSON(s *metrics.Summary) *object {
	a := s.Answers
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
	return ao
}

func orEmpty(xs []metrics.AnswerExample) []metrics.AnswerExample {
	if xs == nil {
		return []metrics.AnswerExample{}
	}
	return xs
}
