package load

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"servebench/record"

	"servebench/workload"
)

// sessionsOf groups a multi-turn workload's requests by session, each session's turns in
// order; nil when the workload has no sessions.
func sessionsOf(reqs []workload.Request) [][]int {
	if len(reqs) == 0 || reqs[0].Turn == 0 {
		return nil
	}
	byID := map[int][]int{}
	var order []int
	for i, r := range reqs {
		if _, ok := byID[r.Session]; !ok {
			order = append(order, r.Session)
		}
		byID[r.Session] = append(byID[r.Session], i)
	}
	out := make([][]int, 0, len(order))
	for _, id := range order {
		turns := byID[id]
		slices.SortFunc(turns, func(a, b int) int { return reqs[a].Turn - reqs[b].Turn })
		out = append(out, turns)
	}
	return out
}

// sessionLoop runs multi-turn sessions: closed loop, Concurrency sessions at a time (each
// user starts the next session when its last one ended); open loop, an arrival starts a
// session. A session's turns go one after another, each after the last one's answer and a
// think time. Counts are sessions: the first Warmup sessions (with --warmup auto, those begun
// while warming) are warmup, every turn of them; then Requests sessions are measured, and
// each runs to its last turn, so no measured session is cut by the count (the end of
// Duration or Ctrl-C still stops sending). A session whose turn failed goes on: its history
// is fixed, not the server's answers.
func (s *state) sessionLoop(sessions [][]int) (unsent int) {
	var all sync.WaitGroup
	// run sends one session begun at start; false when no session may begin
	run := func(n int, start int64, started func(bool)) bool {
		sess, ok := s.takeSession(start)
		started(ok)
		if !ok {
			return false
		}
		turns := sessions[s.r.sessionSlot(sess, len(sessions))]
		rng := rand.New(rand.NewPCG(uint64(s.cfg.ThinkSeed), uint64(n)))
		if s.r.Agent != nil {
			return s.agentTask(n+1, turns, sess, start, rng) // agents.go
		}
		sched := start
		for k, wi := range turns {
			if k > 0 && !s.think(rng) {
				return false
			}
			if k > 0 {
				sched = s.since()
			}
			i, phase, ok := s.takeTurn(sched, sess.warm)
			if !ok {
				return false
			}
			s.inflight.Add(1)
			s.sendReq(s.r.recordID(i), wi, phase, sched, 0)
		}
		return true
	}
	if s.cfg.Pacer == nil {
		var next atomic.Int64
		s.startUsers(s.cfg.Concurrency, func(_ int, started func(bool)) {
			for run(int(next.Add(1)-1), s.since(), started) {
			}
		})
		s.sessionsDone()
		return 0
	}
	// a session has at most one request in flight, so --max-concurrency caps sessions
	var slots chan struct{}
	if s.cfg.MaxConcurrency > 0 {
		slots = make(chan struct{}, s.cfg.MaxConcurrency)
	}
	s.schedule(func(n int, due time.Duration) bool {
		if slots != nil {
			select {
			case slots <- struct{}{}:
			case <-s.sending.Done():
				return false
			}
		}
		if s.sessionsFull() {
			return false
		}
		all.Go(func() {
			run(n, int64(due), func(bool) {})
			if slots != nil {
				<-slots
			}
		})
		return true
	})
	all.Wait()
	s.sessionsDone()
	return 0
}

// sessionPick is a session begun: its index among the warmup sessions or the measured ones.
type sessionPick struct {
	k, begun int
	warm     bool
}

// takeSession begins the next session at now, or says no session may begin: sending stopped,
// or Requests measured sessions have begun.
func (s *state) takeSession(now int64) (sessionPick, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sending.Err() != nil || s.reqCtx.Err() != nil {
		return sessionPick{}, false
	}
	warm := s.sess.begun < s.cfg.Warmup
	if s.cfg.WarmupAuto {
		warm = s.next < s.warmupCount(now) // warming is judged by requests (warmup.go)
	}
	if warm {
		p := sessionPick{k: s.sess.warm, begun: s.sess.begun, warm: true}
		s.sess.begun++
		s.sess.warm++
		return p, true
	}
	if s.cfg.Requests > 0 && s.sess.measured >= s.cfg.Requests {
		return sessionPick{}, false
	}
	if !s.measuring {
		s.startMeasuring(now)
	}
	if s.stopAt > 0 && now >= s.stopAt {
		s.stopper.stop(StopDuration, "", true)
		return sessionPick{}, false
	}
	p := sessionPick{k: s.sess.measured, begun: s.sess.begun}
	s.sess.begun++
	s.sess.measured++
	return p, true
}

// sessionsFull reports whether every measured session has begun (an open loop then stops
// taking arrivals).
func (s *state) sessionsFull() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Requests > 0 && s.sess.measured >= s.cfg.Requests
}

// sessionsDone records, once every session has ended, that the count stopped sending.
func (s *state) sessionsDone() {
	if s.sessionsFull() {
		s.stopper.stop(StopRequests, "", false)
	}
}

// takeTurn numbers the next turn of a session begun in warmup (warm) or measured, or says
// sending stopped (Ctrl-C, an error limit, the end of Duration).
func (s *state) takeTurn(now int64, warm bool) (int, string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sending.Err() != nil || s.reqCtx.Err() != nil {
		return 0, "", false
	}
	phase := record.PhaseWarmup
	if !warm {
		if s.stopAt > 0 && now >= s.stopAt {
			s.stopper.stop(StopDuration, "", true)
			return 0, "", false
		}
		phase = s.phaseAt(now)
	}
	i := s.next
	s.next++
	return i, phase, true
}

// sessionSlot is the workload session a begun session sends, of n (see Runner.Warm: the
// first Warm sessions are the warmup's own).
func (r *Runner) sessionSlot(p sessionPick, n int) int {
	switch {
	case r.Warm <= 0 || r.Warm >= n:
		return p.begun % n // no sessions of the warmup's own: a replay of what was given
	case p.warm:
		return p.k % r.Warm
	}
	return r.Warm + p.k%(n-r.Warm)
}

// think waits a session's think time; false when sending stopped meanwhile.
func (s *state) think(rng *rand.Rand) bool {
	d := s.cfg.ThinkTime
	if s.cfg.ThinkExp {
		d = time.Duration(rng.ExpFloat64() * float64(d))
	}
	return s.pause(d)
}

// pause waits d (none when d ≤ 0); false when sending stopped before or meanwhile.
func (s *state) pause(d time.Duration) bool {
	if d <= 0 {
		return s.sending.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.sending.Done():
		return false
	}
}
