package load

import (
	"context"
	"fmt"
	"sync"
	"time"

	"servebench/record"
)

// Reasons sending stopped (record.RunEnd.Stop).
const (
	StopRequests     = "requests"       // --requests were sent
	StopDuration     = "duration"       // --duration elapsed
	StopSchedule     = "schedule"       // the arrival schedule (a trace) ran out
	StopMaxErrors    = "max-errors"     // --max-errors reached
	StopMaxErrorRate = "max-error-rate" // --max-error-rate exceeded
	StopInterrupted  = "interrupted"    // the soft stop (first Ctrl-C)
	StopSink         = "sink"           // the records could not be written
)

// How the requests still in flight at the end were cancelled (record.RunEnd.CancelledBy).
const (
	CancelGrace = "grace"       // the grace period after the stop ended
	CancelHard  = "second-stop" // a second Ctrl-C (or SIGTERM): cancelled at once
)

// errorRateMin is how many requests must have finished before --max-error-rate is judged,
// so that one early failure (1 of 1 = 100%) does not end a run.
const errorRateMin = 20

// stopper is the one place that ends sending. The first reason given is the one reported;
// stopping with grace (every stop but a natural end) also arms the grace period, after which
// the requests still in flight are cancelled and recorded as cancelled.
type stopper struct {
	grace       time.Duration
	stopSending func()
	cancelReqs  func()

	mu          sync.Mutex
	reason      string
	detail      string
	graceTimer  *time.Timer
	graceEnded  bool // the grace timer fired and cancelled the requests in flight
	timers      []*time.Timer
	failed, all int // finished requests, for the error rules (never our own cancellations)
	maxErrors   int
	maxRate     float64
	// dropHeld is closed by the first stop that is not the run's natural end (the schedule or
	// the request count ran out): a replay's turns held for the turns before them are dropped
	// then (follow.go), and sent after a natural end.
	dropHeld chan struct{}
	dropped  bool
}

func newStopper(grace time.Duration, stopSending, cancelReqs func()) *stopper {
	return &stopper{grace: grace, stopSending: stopSending, cancelReqs: cancelReqs, dropHeld: make(chan struct{})}
}

// stop ends sending for reason; with grace, in-flight requests are cancelled after the grace
// period.
func (s *stopper) stop(reason, detail string, grace bool) {
	s.mu.Lock()
	if s.reason == "" {
		s.reason, s.detail = reason, detail
	}
	if reason != StopSchedule && reason != StopRequests && !s.dropped {
		s.dropped = true
		close(s.dropHeld)
	}
	if grace && s.graceTimer == nil {
		s.graceTimer = time.AfterFunc(s.grace, func() {
			s.mu.Lock()
			s.graceEnded = true
			s.mu.Unlock()
			s.cancelReqs()
		})
	}
	s.mu.Unlock()
	s.stopSending()
}

// why returns the first reason sending stopped, and its detail.
func (s *stopper) why() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason, s.detail
}

// cancelledBy says what cancelled the requests in flight, given the hard context (a second
// Ctrl-C): CancelGrace, CancelHard, or "" when neither did.
func (s *stopper) cancelledBy(hard context.Context) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.graceEnded:
		return CancelGrace
	case hard.Err() != nil:
		return CancelHard
	}
	return ""
}

// after stops sending for reason (with grace) after d.
func (s *stopper) after(d time.Duration, reason string) {
	t := time.AfterFunc(d, func() { s.stop(reason, "", true) })
	s.mu.Lock()
	s.timers = append(s.timers, t)
	s.mu.Unlock()
}

// disarm stops every timer once the run is over.
func (s *stopper) disarm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.timers {
		t.Stop()
	}
	if s.graceTimer != nil {
		s.graceTimer.Stop()
	}
}

// count feeds one finished request to the error stop rules. Warmup failures count (the server
// failed all the same); cancellations do not, since they are ours.
func (s *stopper) count(r *record.Record) {
	if r.ErrorClass == record.ErrCancelled || (s.maxErrors == 0 && s.maxRate == 0) {
		return
	}
	s.mu.Lock()
	s.all++
	if !r.OK() {
		s.failed++
	}
	failed, all := s.failed, s.all
	s.mu.Unlock()
	switch {
	case s.maxErrors > 0 && failed >= s.maxErrors:
		s.stop(StopMaxErrors, fmt.Sprintf("%d failed requests reached --max-errors %d", failed, s.maxErrors), true)
	case s.maxRate > 0 && all >= errorRateMin && float64(failed)/float64(all) > s.maxRate:
		s.stop(StopMaxErrorRate, fmt.Sprintf("%d of %d requests failed (%.1f%%), above --max-error-rate %g%%",
			failed, all, 100*float64(failed)/float64(all), 100*s.maxRate), true)
	}
}
