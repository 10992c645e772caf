package load

import (
	"time"

	"servebench/record"
)

// Load stages (Config.Stages): several loads one after the other in one run, each request
// recorded with the index of the stage it was sent in (record.Record.Stage).
//
// Closed loop: as many user goroutines as the largest stage has users; user j sends only while
// the current stage has more than j users, and waits otherwise, so a stage of fewer users
// lets the surplus users finish what they have in flight and then rest. The stages are timed
// from the first measured request (the warmup runs at the first stage's users), as Duration
// is. Open loop: the pacer is the stages' schedule (pacer.Steps), and a request's stage is
// the one its scheduled time falls in, timed from the schedule's start; the warmup takes the
// first stage's first arrivals.

// idlePoll is how often a resting user looks again while the stage times are not known yet
// (the warmup is still running).
const idlePoll = 10 * time.Millisecond

// stageEnds are the stages' cumulative ends, ns from the first stage's start.
func stageEnds(sts []record.Stage) []int64 {
	ends := make([]int64, len(sts))
	var t int64
	for i, st := range sts {
		t += st.Duration
		ends[i] = t
	}
	return ends
}

// stageLocked is the stage of a request taken at now (ns since t0), and the start of the
// next stage (0: none, or not known yet). The caller holds s.mu.
func (s *state) stageLocked(now int64) (k int, next int64) {
	sts := s.cfg.Stages
	if len(sts) == 0 {
		return 0, 0
	}
	base := int64(s.cfg.Offset)
	if s.cfg.Pacer == nil {
		if !s.measuring {
			return 0, 0
		}
		base = s.mStart
	}
	ends := stageEnds(sts)
	for k < len(ends)-1 && now-base >= ends[k] {
		k++
	}
	if k < len(ends)-1 {
		next = base + ends[k]
	}
	return k, next
}

// waitTurn blocks closed-loop user j while the current stage has no more than j users, and
// reports false when sending stopped meanwhile. Without stages every user always has its turn.
func (s *state) waitTurn(timer *time.Timer, j int) bool {
	if len(s.cfg.Stages) == 0 {
		return true
	}
	for {
		s.mu.Lock()
		k, next := s.stageLocked(s.since())
		measuring := s.measuring
		s.mu.Unlock()
		if j < s.cfg.Stages[k].Users {
			return true
		}
		wait := idlePoll
		switch {
		case measuring && next == 0:
			<-s.sending.Done() // rests in the last stage: until sending stops
			return false
		case measuring:
			wait = max(time.Until(s.t0.Add(time.Duration(next))), 0)
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-s.sending.Done():
			return false
		}
	}
}
