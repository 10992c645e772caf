package load

import (
	"sync"
	"sync/atomic"
	"time"
)

// A replayed trace's sessions (Runner.Follows): a later turn of a session is sent at its
// arrival or, when the previous turn of its session has not ended by then, the recorded gap
// after that end, so that the server sees each conversation's turns one after another as the
// trace did. Rows of no session keep their arrivals. A held turn's scheduled time is the time
// it was held to, so the replay's lateness is the sender's alone; the holds are counted apart
// (Outcome.Held).

// turnEnd is one sent request's end, for the turn that follows it.
type turnEnd struct {
	done chan struct{} // closed when the request ended, or was never sent
	end  int64         // ns since t0; set before done is closed
}

// follows is a run's bookkeeping of turns: each request's end by workload slot (the latest
// request that sent it), and the holds.
type follows struct {
	mu    sync.Mutex
	ends  map[int]*turnEnd
	turns atomic.Int64 // later turns sent (held or not)
	held  atomic.Int64 // of them, held past their arrival
	total atomic.Int64 // ns held, summed
	most  atomic.Int64 // ns, the longest hold
	lost  atomic.Int64 // held turns never sent (sending stopped while they waited)
}

// follow registers pick p's end and returns the end of the turn it follows with the recorded
// gap (nil when it follows none, or the turn it follows was not sent by this run: another
// shard's).
func (s *state) follow(p pick) (mine, prev *turnEnd, gap time.Duration) {
	fs := s.r.Follows
	if fs == nil {
		return nil, nil, 0
	}
	f := &s.chain
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ends == nil {
		f.ends = map[int]*turnEnd{}
	}
	mine = &turnEnd{done: make(chan struct{})}
	if w := fs[p.slot%len(fs)]; w != nil {
		prev, gap = f.ends[w.Prev], w.Gap
	}
	f.ends[p.slot] = mine
	return mine, prev, gap
}

// ended marks a turn's end.
func (s *state) ended(t *turnEnd) {
	if t != nil {
		t.end = s.since()
		close(t.done)
	}
}

// sendAfter sends pick p, due at due, once the turn it follows (prev) has ended and gap has
// passed since (none when gap < 0: the trace did not say), or at due if that is later; it
// takes a slot of slots (--max-concurrency) only then. A turn dropped while it waits is
// counted lost.
func (s *state) sendAfter(p pick, due time.Duration, prev *turnEnd, gap time.Duration, slots chan struct{}) {
	f := &s.chain
	f.turns.Add(1)
	lost := func() {
		s.inflight.Done()
		f.lost.Add(1)
	}
	if !hold(s, prev.done) {
		lost()
		return
	}
	at := due
	if t := time.Duration(prev.end) + max(gap, 0); t > at {
		at = t
	}
	if d := time.Until(s.t0.Add(at - sendLead)); d > 0 { // the request is made meanwhile (ontime.go)
		timer := time.NewTimer(d)
		defer timer.Stop()
		if !hold(s, timer.C) {
			lost()
			return
		}
	}
	if slots != nil {
		select {
		case slots <- struct{}{}:
		case <-s.stopper.dropHeld:
			lost()
			return
		case <-s.reqCtx.Done():
			lost()
			return
		}
		defer func() { <-slots }()
	}
	if d := int64(at - due); d > 0 {
		f.held.Add(1)
		f.total.Add(d)
		for m := f.most.Load(); d > m && !f.most.CompareAndSwap(m, d); m = f.most.Load() {
		}
	}
	s.send(p, int64(at))
}

// hold waits for c; false when the held turn must be dropped instead: sending stopped for
// anything but the natural end of the run (the schedule or the request count ran out: a turn
// taken before it is still sent when its turn comes), or the requests in flight were
// cancelled.
func hold[T any](s *state, c <-chan T) bool {
	select {
	case <-c:
		return true
	case <-s.stopper.dropHeld:
	case <-s.reqCtx.Done():
	}
	return false
}

// Held is how a replayed trace's later turns of a session were sent (Outcome.Held).
type Held struct {
	// Turns is the later turns of a session the run took; Held how many of them were held
	// past their arrival until the previous turn had ended, by Total in all and Longest at
	// most; Lost how many were never sent because sending stopped while they waited.
	Turns, Held, Lost int
	Total, Longest    time.Duration
}

// heldResult is the run's holds (nil when the workload has no sessions to follow).
func (s *state) heldResult() *Held {
	f := &s.chain
	if s.r.Follows == nil || f.turns.Load() == 0 {
		return nil
	}
	return &Held{Turns: int(f.turns.Load()), Held: int(f.held.Load()), Lost: int(f.lost.Load()),
		Total: time.Duration(f.total.Load()), Longest: time.Duration(f.most.Load())}
}
