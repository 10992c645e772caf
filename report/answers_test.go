package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// A run that judged answers shows its accuracy and invalid share, with their intervals and
// examples, in every format; one that judged none shows nothing of it.
func TestAnswersInEveryFormat(t *testing.T) {
	yes, no := true, false
	var acc metrics.Accumulator
	for i := range 10 {
		r := record.Record{ID: i, Phase: record.PhaseMeasure, Scheduled: 1, Dispatched: 2, Sent: 3, Headers: 4,
			Events: []record.Event{{T: 5, N: 1}, {T: 6, N: 1}}, Done: 7, Status: 200, OutputTokens: 2, Correct: &yes, SchemaValid: &yes}
		if i < 2 {
			r.Correct, r.Answer, r.Expected = &no, "The answer is C.", "choice B"
		}
		if i == 9 {
			r.SchemaValid, r.SchemaError, r.Answer = &no, "not JSON: unexpected EOF", `{"a":`
		}
		acc.Add(&r)
	}
	s := acc.Summary()
	var txt, md, js, page bytes.Buffer
	for _, err := range []error{Text(&txt, nil, s), Markdown(&md, nil, s), JSON(&js, nil, s), HTML(&page, nil, s, nil)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, out := range map[string]string{"text": txt.String(), "markdown": md.String(), "html": page.String()} {
		wants := []string{"80.0%", "49.0%", "10.0%", "not JSON: unexpected EOF"}
		if name != "html" { // the HTML summary shows the first invalid answer, the others every example
			wants = append(wants, "want choice B")
		}
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in\n%s", name, want, out)
			}
		}
	}
	var got struct {
		Answers struct {
			Accuracy     float64                 `json:"accuracy"`
			InvalidShare float64                 `json:"invalid_share"`
			Wrong        []metrics.AnswerExample `json:"wrong_examples"`
			Invalid      []metrics.AnswerExample `json:"invalid_examples"`
		} `json:"answers"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if a := got.Answers; a.Accuracy != 0.8 || a.InvalidShare != 0.1 || len(a.Wrong) != 2 || len(a.Invalid) != 1 || a.Invalid[0].Violation == "" {
		t.Errorf("JSON answers: %+v", a)
	}

	var plain metrics.Accumulator
	plain.Add(&record.Record{Phase: record.PhaseMeasure, Scheduled: 1, Dispatched: 2, Sent: 3, Events: []record.Event{{T: 5, N: 1}}, Done: 7, Status: 200})
	txt.Reset()
	js.Reset()
	_ = Text(&txt, nil, plain.Summary())
	_ = JSON(&js, nil, plain.Summary())
	if strings.Contains(txt.String(), "accuracy") || strings.Contains(js.String(), `"answers"`) {
		t.Error("a run that judged no answer shows answer figures")
	}
}
