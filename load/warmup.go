package load

import (
	"math"
	"sync"
	"sync/atomic"

	"servebench/record"
	"servebench/stat"
)

// Warming until warm. A fixed count of warmup requests trusts that one request per slot was
// enough; real engines capture CUDA graphs per batch shape, autotune kernels and fill caches
// for far longer. With Config.WarmupAuto the warmup goes on, at the run's own load shape,
// until it stops moving, as judged by stat.WarmupJudge: each warmup request's content
// events reach the judge as they are stamped (stamp.Content), and once the minimum of one
// request per slot is behind, the gaps between a request's events are cut, in arrival
// order, into windows of 8 gaps per request streaming at once; warming stops when the last
// three windows' ITL p25 agree within WarmupTolerance with no trend across them (at most a
// sixth of the tolerance per window), or, from the tenth window on, when the last six show
// no falling trend by a rank test (a busy client's windows, which never agree) — or at the
// caps, which the run-end line names (and the summary warns of). Requests already in flight when warming stops stay warmup.
//
// The virtual-time matrix (package vtime) runs this same runner, which is how the judge's
// stopping point was measured (docs/metrics.md "Warmup").

// autoWarm is the state of an automatic warmup, guarded by state.mu (start, done, end) and
// by its own mutex (the judge, fed by take and by the records writer).
type autoWarm struct {
	done  bool // warming stopped
	tail  int  // the index of the tail's first request once done (warmupCount); 0: no tail
	end   int  // the first measured request's index
	why   string
	start int64 // ns since t0 of the first warmup request

	mu      sync.Mutex
	judge   stat.WarmupJudge
	settled atomic.Bool // the judge said warm: streamed events need no lock any more
}

// streamTo is the judge a request's stamp streams its content events to: nil but for a
// warmup request under WarmupAuto.
func (s *state) streamTo(phase string) *autoWarm {
	if !s.cfg.WarmupAuto || phase != record.PhaseWarmup {
		return nil
	}
	return &s.warm
}

// event takes one content event of warmup request id, stamped t, on the request's
// goroutine: streamed, the judge learns of a window's gaps as they happen, not when the
// requests that ran through it finish (which made measuring begin an E2E late).
func (w *autoWarm) event(id int, t int64) {
	if w == nil || w.settled.Load() {
		return
	}
	w.mu.Lock()
	if w.judge.Event(id, t) {
		w.settled.Store(true)
	}
	w.mu.Unlock()
}

// warmupCount is how many requests are warmup (take holds s.mu): the fixed count, or with
// WarmupAuto the index at which warming stopped (past every index while it goes on).
func (s *state) warmupCount(now int64) int {
	if !s.cfg.WarmupAuto {
		return s.cfg.Warmup
	}
	w := &s.warm
	if w.done {
		return w.end
	}
	i := s.next
	if i == 0 {
		w.start = now
	}
	w.mu.Lock()
	settled := w.judge.Settled()
	w.mu.Unlock()
	switch {
	case i < s.cfg.WarmupMin:
		return math.MaxInt
	case settled:
		w.why = "converged"
	case s.cfg.WarmupMax > 0 && i >= s.cfg.WarmupMax:
		w.why = "max requests"
	case s.cfg.WarmupTimeout > 0 && now-w.start >= int64(s.cfg.WarmupTimeout):
		w.why = "max time"
	default:
		return math.MaxInt
	}
	w.done, w.end = true, i
	if s.rampsWarmup() && !s.sessions {
		w.tail, w.end = i, i+s.cfg.Concurrency
	}
	return w.end
}

// A judged warmup ends with a tail that starts as the measured phase will. Warming keeps
// every user busy, so the server never meets the ramp from one user in flight to N that a
// closed loop's measured phase starts with after the drain (drain.go): each batch size on
// the way is a shape a server that compiles or captures per shape meets first in the
// measured window (docs/metrics.md "Warmup"). So once the judge says warm (or a cap ends warming), the warmup
// drains, and N more warmup requests go out as the measured ones will, spread over the
// stagger period (midWait at the tail's first index); then it drains again and measuring
// begins. It costs about two request times, which the run-end line's warmup count includes.

// sentWarmup tells the judge that warmup request i goes out at now (take holds s.mu).
func (s *state) sentWarmup(i int, now int64) {
	if !s.cfg.WarmupAuto || s.warm.done {
		return
	}
	w := &s.warm
	w.mu.Lock()
	w.judge.Tolerance, w.judge.Min = s.cfg.WarmupTolerance, s.cfg.WarmupMin
	w.judge.Sent(s.r.recordID(i), now)
	w.mu.Unlock()
}

// observeWarmup takes a finished warmup record (on the records writer's goroutine); a
// failed one only leaves the judge's in-flight set.
func (s *state) observeWarmup(rec *record.Record) {
	if !s.cfg.WarmupAuto || rec.Phase != record.PhaseWarmup {
		return
	}
	var ev []int64
	if rec.OK() {
		ev = make([]int64, len(rec.Events))
		for i, e := range rec.Events {
			ev[i] = e.T
		}
	}
	sent := rec.Sent
	if sent == 0 {
		sent = rec.Scheduled
	}
	w := &s.warm
	w.mu.Lock()
	if w.judge.Done(rec.ID, sent, ev) {
		w.settled.Store(true)
	}
	w.mu.Unlock()
}

// windows is how many windows the judge closed.
func (w *autoWarm) windows() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.judge.Windows()
}

// result is the warmup's request count and why it stopped, for the run-end line.
func (w *autoWarm) result(s *state) (int, string) {
	if !s.cfg.WarmupAuto {
		return 0, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !w.done {
		return s.next, "not reached" // the run ended while still warming
	}
	return w.end, w.why
}
