package load

import (
	"context"
	"slices"
	"testing"
	"time"

	"servebench/record"
)

// TestWarmupRampsLikeTheMeasuredPhase: a closed loop's warmup drains halfway and its second
// half starts spread over one request time, as the measured phase will start, so the batch
// sizes of the measured ramp from one user to N were met before measuring.
func TestWarmupRampsLikeTheMeasuredPhase(t *testing.T) {
	be := &fakeBackend{gap: 2 * time.Millisecond}
	c := &collector{}
	r := newRunner(be, c, 5)
	const users = 4
	err := r.Run(context.Background(), context.Background(), time.Now(),
		Config{Concurrency: users, Warmup: 2 * users, Requests: 8 * users})
	if err != nil {
		t.Fatal(err)
	}
	var firstEnd, firstE2E []int64
	var second []int64
	for _, rec := range c.recs {
		switch {
		case rec.Phase != record.PhaseWarmup:
		case rec.ID < users:
			firstEnd = append(firstEnd, rec.Done)
			firstE2E = append(firstE2E, rec.Done-rec.Sent)
		default:
			second = append(second, rec.Sent)
		}
	}
	if len(firstEnd) != users || len(second) != users {
		t.Fatalf("warmup halves of %d and %d requests, want %d each", len(firstEnd), len(second), users)
	}
	slices.Sort(second)
	if drained := slices.Max(firstEnd); second[0] < drained {
		t.Errorf("the warmup's second half began at %d ns, before its first half drained at %d ns", second[0], drained)
	}
	// the k-th user released waits k/N of the warmup's median request time, and timers do not
	// fire early: the last of the second half goes at least (N−1)/N of it after the first,
	// less what a busy machine adds to the first send (hence a quarter, not three)
	if span, least := second[users-1]-second[0], slices.Min(firstE2E)/4; span < least {
		t.Errorf("the second half's sends span %d ns, want at least %d (spread over one request time)", span, least)
	}
}

// TestWhichWarmupsRamp: only a closed loop of several users with a fixed warmup whose
// measured phase starts staggered drains halfway; with under four measured requests per user
// (a sweep's throughput point) both phases start every user at once.
func TestWhichWarmupsRamp(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want bool
	}{
		{"closed loop", Config{Concurrency: 8, Warmup: 16, Requests: 200}, true},
		{"duration run", Config{Concurrency: 8, Warmup: 16, Duration: time.Second}, true},
		{"few requests per user", Config{Concurrency: 40, Warmup: 40, Requests: 40}, false},
		{"one user", Config{Concurrency: 1, Warmup: 2, Requests: 200}, false},
		{"one warmup request", Config{Concurrency: 8, Warmup: 1, Requests: 200}, false},
		{"warmup auto", Config{Concurrency: 8, WarmupAuto: true, Requests: 200}, false},
		{"no drain (selftest)", Config{Concurrency: 8, Warmup: 16, Requests: 200, NoWarmupDrain: true}, false},
		{"stages", Config{Concurrency: 8, Warmup: 16, Duration: time.Second, Stages: []record.Stage{{Users: 8, Duration: int64(time.Second)}}}, false},
	} {
		s := &state{cfg: tc.c}
		if got := s.rampsWarmup(); got != tc.want {
			t.Errorf("%s: rampsWarmup %v, want %v", tc.name, got, tc.want)
		}
	}
}
