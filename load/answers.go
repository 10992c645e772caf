package load

import (
	"strings"

	"servebench/client"
	"servebench/record"
	"servebench/workload"
)

// Judge scores the answer text of a completed request into its record (Record.Correct,
// SchemaValid, SchemaError, Answer). The runner calls it from the request's goroutine after
// the stream ended, so it must be safe for concurrent use.
type Judge func(rec *record.Record, req *workload.Request, text string)

// maxAnswerText bounds the answer text a request's stamp keeps: an answer to score is short,
// and a runaway stream must not hold megabytes per request in flight. Text past it is cut, so
// its score sees the first maxAnswerText bytes.
const maxAnswerText = 1 << 20

// answerText is what a stamp keeps of the answer text when the run judges answers.
type answerText struct {
	want bool
	b    strings.Builder
}

var _ client.TextObserver = (*stamp)(nil)

// WantText implements client.TextObserver.
func (s *stamp) WantText() bool { return s.text.want }

// Text implements client.TextObserver.
func (s *stamp) Text(t string) {
	if room := maxAnswerText - s.text.b.Len(); room > 0 {
		s.text.b.WriteString(t[:min(len(t), room)])
	}
}

// judge scores a completed request's answer; a failed one is not judged (it is counted as
// failed, not as wrong).
func (r *Runner) judge(st *stamp, rec *record.Record, req *workload.Request) {
	if r.Judge == nil || !rec.OK() {
		return
	}
	r.Judge(rec, req, st.text.b.String())
}
