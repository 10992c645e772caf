package metrics

import (
	"servebench/record"
	"servebench/stat"
)

// Answers are the figures of a run that judged its answers (record's answers.go), over the
// completed measured requests:
//   - accuracy = correct / scored, for requests scored against an answer key (run --dataset
//     answers:FILE), with its 95% Wilson score interval (stat.Wilson): the share of requests
//     answered right, each request one trial;
//   - invalid share = invalid / checked, for requests checked against the response format
//     (run --response-format), with its Wilson interval;
//   - a few wrong and invalid answers as examples, the first met of each.
//
// Failed requests are not judged: they are failures, counted as such, and miss a --slo
// correct objective. Nil when no request was judged.
type Answers struct {
	Scored, Correct        int
	Accuracy               *float64
	AccuracyLo, AccuracyHi *float64
	Checked, Invalid       int
	InvalidShare           *float64
	InvalidLo, InvalidHi   *float64
	// Wrong and Violations are up to MaxAnswerExamples wrong answers and schema violations.
	Wrong      []AnswerExample
	Violations []AnswerExample
}

// AnswerExample is one wrong or invalid answer: its request, the answer's text (clipped,
// record.ClipAnswer) and, for a schema violation, the first one.
type AnswerExample struct {
	ID        int    `json:"id"`
	Run       int    `json:"run,omitempty"`
	Answer    string `json:"answer"`
	Violation string `json:"violation,omitempty"`
	Expected  string `json:"expected,omitempty"` // the key's rule and answer, e.g. "choice B"
}

// MaxAnswerExamples bounds the examples of each kind a summary keeps.
const MaxAnswerExamples = 5

// answersAcc collects the judged answers of completed measured requests.
type answersAcc struct {
	scored, correct, checked, invalid int
	wrong, violations                 []AnswerExample
}

func (a *answersAcc) add(r *record.Record) {
	if r.Correct != nil {
		a.scored++
		if *r.Correct {
			a.correct++
		} else if len(a.wrong) < MaxAnswerExamples {
			a.wrong = append(a.wrong, AnswerExample{ID: r.ID, Run: r.Run, Answer: r.Answer, Expected: r.Expected})
		}
	}
	if r.SchemaValid != nil {
		a.checked++
		if !*r.SchemaValid {
			a.invalid++
			if len(a.violations) < MaxAnswerExamples {
				a.violations = append(a.violations, AnswerExample{ID: r.ID, Run: r.Run, Answer: r.Answer, Violation: r.SchemaError})
			}
		}
	}
}

// summary is the Answers figure, nil when nothing was judged.
func (a *answersAcc) summary() *Answers {
	if a.scored == 0 && a.checked == 0 {
		return nil
	}
	s := &Answers{Scored: a.scored, Correct: a.correct, Checked: a.checked, Invalid: a.invalid,
		Wrong: append([]AnswerExample(nil), a.wrong...), Violations: append([]AnswerExample(nil), a.violations...)}
	if lo, hi, ok := stat.Wilson(a.correct, a.scored, stat.Z95); ok {
		s.Accuracy, s.AccuracyLo, s.AccuracyHi = ptr(float64(a.correct)/float64(a.scored)), ptr(lo), ptr(hi)
	}
	if lo, hi, ok := stat.Wilson(a.invalid, a.checked, stat.Z95); ok {
		s.InvalidShare, s.InvalidLo, s.InvalidHi = ptr(float64(a.invalid)/float64(a.checked)), ptr(lo), ptr(hi)
	}
	return s
}
