package load

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"servebench/record"
)

// TestClosedLoopStages: a closed loop of stages 2, 6 and 1 users sends in each stage about in
// proportion to its users (requests take the same time at any load here), and tags each
// request with its stage; the warmup runs at the first stage's users, as stage 0. In a synctest
// bubble: stage ends are wall-clock timers, and the counts per stage are the subject, not how
// fast a starved machine sends.
func TestClosedLoopStages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		be := &fakeBackend{gap: 10 * time.Millisecond} // requests of ~30 ms, mostly sleep: they scale with users on a busy machine
		c := &collector{}
		st := func(users int) record.Stage {
			return record.Stage{Users: users, Duration: int64(400 * time.Millisecond)}
		}
		cfg := Config{Concurrency: 6, Warmup: 2, Duration: 1200 * time.Millisecond, Grace: time.Second,
			Stages: []record.Stage{st(2), st(6), st(1)}}
		r := newRunner(be, c, 3)
		r.VirtualClock = true
		if err := r.Run(context.Background(), context.Background(), time.Now(), cfg); err != nil {
			t.Fatal(err)
		}
		per := make([]int, 3)
		for _, rec := range c.recs {
			if rec.Phase == record.PhaseWarmup {
				if rec.Stage != 0 {
					t.Errorf("warmup request in stage %d", rec.Stage)
				}
				continue
			}
			per[rec.Stage]++
		}
		if !(10*per[1] > 18*per[0] && per[2] < per[0] && per[2] > 0) {
			t.Errorf("requests per stage %v: want stage 2 (6 users) > 1.8× stage 1 (2 users) > stage 3 (1 user) > 0", per)
		}
		if p := be.peak.Load(); p > 6 {
			t.Errorf("%d requests in flight, more than the largest stage's 6 users", p)
		}
	})
}

func TestStageEnds(t *testing.T) {
	ends := stageEnds([]record.Stage{{Duration: 5}, {Duration: 7}, {Duration: 1}})
	if len(ends) != 3 || ends[0] != 5 || ends[1] != 12 || ends[2] != 13 {
		t.Errorf("ends %v", ends)
	}
}
