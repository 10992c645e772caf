package load

import (
	"math"
	"sync"
)

// sentSlots marks the workload requests a run has sent, so that a record can say what its
// prompt repeats by design: the first time a request is sent, the share of it that begins as
// a request before it in the workload (Runner.Repeats: the workload is laid out in the order
// it is first sent: the warmup's own requests, then the measured ones, a session's turns in
// order); each time after, all of it, as a replay of a prompts file cycled by a long run.
type sentSlots struct {
	mu   sync.Mutex
	sent []bool
}

// repeated is the share of workload request slot's prompt that a request sent before it in
// this run began with, rounded to 4 places (0 without Runner.Repeats), and marks it sent.
func (s *state) repeated(slot int) float64 {
	if s.r.Repeats == nil || slot >= len(s.r.Repeats) {
		return 0
	}
	ss := &s.sent
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.sent == nil {
		ss.sent = make([]bool, len(s.r.Workload))
	}
	if ss.sent[slot] {
		return 1
	}
	ss.sent[slot] = true
	return math.Round(s.r.Repeats[slot]*1e4) / 1e4
}
