package load

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

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
// think time; every turn is one request of the run (warmup, measured, stop rules as usual).
// A session whose turn failed goes on: its history is fixed, not the server's answers.
func (s *state) sessionLoop(sessions [][]int) (unsent int) {
	var next atomic.Int64
	var all sync.WaitGroup
	// run sends session si's turns; false when a stop rule ended sending
	run := func(si int, start int64) bool {
		turns := sessions[si%len(sessions)]
		rng := rand.New(rand.NewPCG(uint64(s.cfg.ThinkSeed), uint64(si)))
		sched := start
		for k, wi := range turns {
			if k > 0 && !s.think(rng) {
				return false
			}
			if k > 0 {
				sched = s.since()
			}
			i, phase, ok := s.take(sched)
			if !ok {
				return false
			}
			s.inflight.Add(1)
			s.sendReq(s.r.recordID(i), &s.r.Workload[wi], phase, sched)
		}
		return true
	}
	if s.cfg.Pacer == nil {
		for range s.cfg.Concurrency {
			all.Go(func() {
				for run(int(next.Add(1)-1), s.since()) {
				}
			})
		}
		all.Wait()
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
		all.Go(func() {
			run(n, int64(due))
			if slots != nil {
				<-slots
			}
		})
		return true
	})
	all.Wait()
	return 0
}

// think waits a session's think time; false when sending stopped meanwhile.
func (s *state) think(rng *rand.Rand) bool {
	d := s.cfg.ThinkTime
	if s.cfg.ThinkExp {
		d = time.Duration(rng.ExpFloat64() * float64(d))
	}
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
