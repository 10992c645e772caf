package metrics

import (
	"math/rand/v2"
	"strings"
	"testing"

	"servebench/record"
)

// lateRun is a closed loop of 4 users and 60 measured requests of 16 events after --warmup
// auto (stop): the first slow ones ITL slow× 6 ms, the rest 6 ms, each gap ±10%.
func lateRun(stop string, first int, slow float64, seed uint64) *Summary {
	rng := rand.New(rand.NewPCG(seed, 7))
	a := NewAccumulator(Options{})
	a.SetHeader(&record.Header{Config: map[string]any{"concurrency": 4.0, "warmup_auto": true, "warmup_tolerance": 0.1},
		Ends: []record.RunEnd{{Run: 0, WarmupStop: stop, WarmupRequests: 40}}})
	var clock [4]int64
	for i := range 60 {
		u := i % 4
		itl := 6e6
		if i < first {
			itl *= slow
		}
		r := record.Record{ID: i, Phase: record.PhaseMeasure, Sent: clock[u] + 1, Status: 200, PromptTokens: 64, OutputTokens: 16}
		t := r.Sent + 20e6
		for range 16 {
			r.Events = append(r.Events, record.Event{T: t, N: 1})
			t += int64(itl * (1 + 0.1*rng.NormFloat64()))
		}
		r.FirstEvent, r.Done = r.Events[0].T, r.Events[15].T
		clock[u] = r.Done
		a.Add(&r)
	}
	return a.Summary()
}

// TestLateWarmupNamed: a --warmup auto run whose first 16 measured requests ran 40% slower
// names them, in a warning that says what would have covered them; a steady one, a slow
// start within the tolerance, and a run without --warmup auto are not named.
func TestLateWarmupNamed(t *testing.T) {
	for seed := range uint64(5) {
		s := lateRun("converged", 16, 1.4, seed)
		l := s.LateWarmup
		if l == nil || l.Requests < 12 || l.Requests > 24 || l.Ratio < 1.25 || l.Suggest != 40+l.Requests {
			t.Fatalf("seed %d: a 40%% slower start of 16 requests: %+v", seed, l)
		}
		found := false
		for _, w := range s.Warnings {
			found = found || strings.Contains(w.Text, "--warmup auto ended") && strings.Contains(w.Action, "--warmup ")
		}
		if !found {
			t.Errorf("seed %d: no warning names the late requests: %v", seed, Texts(s.Warnings))
		}
		for _, c := range []struct {
			name  string
			stop  string
			first int
			slow  float64
		}{{"steady", "converged", 0, 1}, {"5% slower", "converged", 16, 1.05}, {"fixed warmup", "", 16, 1.4}} {
			if l := lateRun(c.stop, c.first, c.slow, seed).LateWarmup; l != nil {
				t.Errorf("seed %d, %s: named %+v", seed, c.name, l)
			}
		}
	}
}
