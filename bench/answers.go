package bench

import (
	"context"
	"errors"

	"servebench/load"
	"servebench/record"
	"servebench/runspec"
	"servebench/workload"
)

// readAnswers reads --dataset answers:FILE: a prompts file (JSONL, {"prompt" or "messages"})
// whose every line carries an answer key ("answer", "match", "tolerance";
// workload/answers.go). Like a prompts file it is one set of requests, sent in order and
// cycled when the run asks for more.
func (b *Session) readAnswers(ctx context.Context) ([]workload.Request, error) {
	_, path := b.spec.DatasetOf()
	in, err := b.openInput(ctx, "--dataset", path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	reqs, err := workload.Read(in, path, b.spec.OutputTokens)
	if err != nil && !errors.Is(err, context.Canceled) {
		return nil, runspec.Usagef("--dataset: %v", err) // bad content: its message names the file and line
	}
	if err != nil {
		return nil, b.inputErr("--dataset", err)
	}
	for i := range reqs {
		if reqs[i].Answer == nil {
			return nil, runspec.Usagef(`--dataset answers:%s: line %d has no "answer"`, path, i+1)
		}
	}
	if err := b.identify(in, "answers"); err != nil {
		return nil, err
	}
	// a file smaller than the run is sent again: that reuse is the workload's own, and each
	// record says so (load.Runner.Repeats), so a prefix cache serving it is expected
	return reqs, nil
}

// judge is the runner's answer judge (load.Judge), nil when the run judges nothing: each
// completed request's text is scored against its answer key (exact, regex, choice, number)
// and checked against the response format's schema; the first violation and, for a wrong or
// invalid answer, its text (clipped) go in the record.
func (b *Session) judge() load.Judge {
	s := &b.spec
	if !s.JudgesAnswers() {
		return nil
	}
	sch := s.ResponseSchema()
	return func(rec *record.Record, req *workload.Request, text string) {
		keep := false
		if req.Answer != nil {
			ok := req.Answer.Score(text)
			rec.Correct, keep = &ok, !ok
			if !ok {
				rec.Expected = record.ClipAnswer(req.Answer.Match + " " + req.Answer.Value)
			}
		}
		if sch != nil {
			err := sch.Validate([]byte(text))
			ok := err == nil
			rec.SchemaValid = &ok
			if err != nil {
				rec.SchemaError, keep = record.ClipAnswer(err.Error()), true
			}
		}
		if keep {
			rec.Answer = record.ClipAnswer(text)
		}
	}
}
