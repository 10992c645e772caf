package record

import "testing"

// TestShiftFirstAnswer: merging shards moves the first answer's time with the others (and
// leaves an absent one absent).
func TestShiftFirstAnswer(t *testing.T) {
	r := Record{Sent: 10, Events: []Event{{T: 20}, {T: 30}}, ReasoningEvents: 1, FirstAnswer: 30}
	Shift(&r, 5)
	if r.FirstAnswer != 35 || r.Events[1].T != r.FirstAnswer || !r.Answered() {
		t.Errorf("first answer %d, event %d", r.FirstAnswer, r.Events[1].T)
	}
	r = Record{Sent: 10, Events: []Event{{T: 20}}, ReasoningEvents: 1}
	Shift(&r, 5)
	if r.FirstAnswer != 0 || r.Answered() {
		t.Errorf("no answer: first answer %d", r.FirstAnswer)
	}
}
