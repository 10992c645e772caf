package load

import (
	"slices"
	"time"
)

// A closed loop's measured requests start on a drained server. Each user sends its next
// request as soon as its last one ended, so without a barrier the first measured requests go
// out while the other users' warmup requests are still running or queued: above the
// server's capacity they queue behind the whole warmup, and the measured window opens with
// seconds in which the server serves nothing but warmup. A sweep's 40-user point against a
// 4-slot llama.cpp server measured 1.92 req/s that way while the server completed 3.65.
// Counting every completion in the window whatever its phase was the other choice; it was
// not taken because the latencies would still be those of requests queued behind the
// warmup, and a warmup of a different length would move them. So the first measured request
// waits until every warmup request has ended: the measured phase starts on an idle server,
// its users spread out as the warmup's second half was (staggerTurn), and the window holds
// the point's load and nothing else. Its scheduled time is when it was taken after the
// wait: the wait is the tool's, not the server's.
//
// An open loop is not held: its arrivals keep their schedule (a held arrival would be
// recorded late and its queue time charged to the server), and at a rate the server keeps
// up with, the warmup drains on its own.

// drainWait returns the channel to wait on before the first measured request of a closed
// loop while warmup requests are in flight, or nil when the request may go (take holds s.mu).
func (s *state) drainWait() <-chan struct{} {
	if s.cfg.Pacer != nil || s.cfg.NoWarmupDrain || s.warmOut == 0 {
		return nil
	}
	return s.drainChan()
}

func (s *state) drainChan() <-chan struct{} {
	if s.drained == nil {
		s.drained = make(chan struct{})
	}
	return s.drained
}

// A closed loop's warmup also drains halfway, and its second half starts as the measured
// phase will: on an idle server, the users spread over the stagger period (spreadPeriod).
// The measured phase opens with that ramp from one user in flight to N, and each batch size
// on the way is a shape a lazily compiling server meets for the first time unless the
// warmup met it. The drain at the warmup's end passes the batch sizes downwards only while
// requests end one step apart: against `servebench sim --lazy-compile 500ms`, 8 users, 200
// requests (seed 3), the warmup's drain went from 4 in flight to none, the measured ramp's
// second request compiled batch size 2, and three measured requests were cold in a run
// called "steady … quality good". The second half is the warmup's length-spanning twins
// (bench), so they are admitted one at a time beside requests that decode, as measured ones
// are.

// midWait returns the channel warmup request i waits on: the first request of the warmup's
// second half waits for the first half to drain, or nil (take holds s.mu).
func (s *state) midWait(i int) <-chan struct{} {
	if i == 0 || i != s.midpoint() || s.warmOut == 0 || !s.rampsWarmup() {
		return nil
	}
	return s.drainChan()
}

// midpoint is the index of the warmup's first request after its halfway drain. The second
// half must be N requests long for its ramp to reach the N users in flight the measured
// ramp will reach: the half, from a warmup of 2N or more (the default, whose second half
// is the length-spanning twins); the last N of a shorter one; and of a warmup of N or fewer
// (a sweep's point warms with one request per user) all but the first, which reaches N−1,
// the same batch-size bucket as N unless N−1 is a power of two. Halved, a warmup of N
// reached N/2 in flight, and a one-per-user run's measured requests met the batch of N
// first (docs/metrics.md "The default warmup and servers that compile per shape").
func (s *state) midpoint() int {
	if s.cfg.WarmupAuto {
		return s.warm.tail // 0 (no drain) until warming stopped
	}
	w, n := s.cfg.Warmup, s.cfg.Concurrency
	if w >= 2*n {
		return w / 2
	}
	return max(1, w-n)
}

// rampsWarmup reports whether the warmup drains before a second part that starts as the
// measured phase will: a closed loop of several users with a fixed warmup of two requests
// or more, or a judged one (its tail, warmup.go).
func (s *state) rampsWarmup() bool {
	c := &s.cfg
	return c.Pacer == nil && !c.NoWarmupDrain && len(c.Stages) == 0 &&
		c.Concurrency > 1 && (c.WarmupAuto || c.Warmup >= 2)
}

// warmEnded counts a closed loop's warmup request as ended and, at the last one, releases
// the users waiting to send the first measured requests.
func (s *state) warmEnded(e2e int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warmE2E = append(s.warmE2E, e2e)
	s.warmOut--
	if s.warmOut == 0 && s.drained != nil {
		close(s.drained)
		s.drained = nil
		// the users released now ramp up again, over the request time so far; the user whose
		// request ended last sends at once, as the first of them (k = 0), so the others wait
		// their turns from k = 1 (two sent at once were one prefill of two prompts)
		s.released, s.staggerPeriod = 1, 0
	}
}

// awaitDrain waits for the warmup to drain, then for this user's turn in the stagger; false
// when sending stopped meanwhile.
func (s *state) awaitDrain(wait <-chan struct{}) bool {
	select {
	case <-wait:
	case <-s.sending.Done():
		return false
	}
	return s.pause(s.staggerTurn())
}

// staggerTurn is how long the next user released from the drain waits: the k-th waits k/N
// of the stagger period (spreadPeriod), so the N users start spread out, as a closed loop's
// users are in its steady state, not as one lock-step cohort. Released at once, the cohort
// sent and finished together and, against the simulator, broke up a few seconds into the
// window, stepping throughput 11-17% (every run of the README's walk at 32 output tokens was
// NOT STEADY, and at 128 the first fifth of the window ran 10% slow); and with few requests
// per user, where it never broke up, the whole cohort reached the server in one instant, a
// herd no real closed loop sends, whose read backlog a server counts in every TTFT. The ramp
// from one user to N meets the batch sizes the warmup's own ramp (midWait) met, released
// the same way, so a lazily compiling server has nothing new to compile.
func (s *state) staggerTurn() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.released
	s.released++
	n := s.cfg.Concurrency
	if k == 0 || n <= 1 || len(s.warmE2E) == 0 {
		return 0
	}
	if s.staggerPeriod == 0 { // once per drain: the warmup's times so far
		slices.Sort(s.warmE2E)
		s.staggerPeriod = spreadPeriod(&s.cfg, max(s.warmE2E[len(s.warmE2E)/2], 1))
	}
	return time.Duration(s.staggerPeriod * int64(k%n) / int64(n))
}

// spreadPeriod is the time, in ns, over which the users released from a drain start, given
// the warmup's median request time: one request time, as users are spread in a closed
// loop's steady state, when each user has four measured requests or more (or the run is
// timed); with fewer, the request time times a quarter of the requests per user. The ramp
// holds the load under N users while it lasts and the window ends with the same ramp down, so
// over one request time it would cost a window of r requests per user a share 1/(r+1) of its
// load: half at one request per user, the sweep's maximum-throughput point, where the load
// is the figure. Shortened in proportion to r, the ramp is a fifth of the window (1/(1+4))
// at any count, as at four per user, and at one per user still spreads N users over a
// quarter of a request time, not one instant. (Spreading only the warmup's tail and letting
// the measured requests follow it was not taken: the measured phase must start on a drained
// server.)
func spreadPeriod(c *Config, median int64) int64 {
	if c.Requests <= 0 || c.Requests >= 4*c.Concurrency {
		return median
	}
	return max(median*int64(c.Requests)/int64(4*c.Concurrency), 1)
}
