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

// TestWhichWarmupsRamp: only a closed loop of several users with a fixed warmup drains
// halfway, however few measured requests each user has (a sweep's throughput point sends
// one): its measured phase starts staggered too. A judged warmup drains before its tail.
func TestWhichWarmupsRamp(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want bool
	}{
		{"closed loop", Config{Concurrency: 8, Warmup: 16, Requests: 200}, true},
		{"duration run", Config{Concurrency: 8, Warmup: 16, Duration: time.Second}, true},
		{"one request per user", Config{Concurrency: 40, Warmup: 40, Requests: 40}, true},
		{"one user", Config{Concurrency: 1, Warmup: 2, Requests: 200}, false},
		{"one warmup request", Config{Concurrency: 8, Warmup: 1, Requests: 200}, false},
		{"warmup auto (its tail)", Config{Concurrency: 8, WarmupAuto: true, Requests: 200}, true},
		{"no drain (selftest)", Config{Concurrency: 8, Warmup: 16, Requests: 200, NoWarmupDrain: true}, false},
		{"stages", Config{Concurrency: 8, Warmup: 16, Duration: time.Second, Stages: []record.Stage{{Users: 8, Duration: int64(time.Second)}}}, false},
	} {
		s := &state{cfg: tc.c}
		if got := s.rampsWarmup(); got != tc.want {
			t.Errorf("%s: rampsWarmup %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFewPerUserStartsSpread: with two measured requests per user the measured phase still
// starts after the warmup drained, its users spread out, not all at one instant (a herd no
// real closed loop sends): the last first-measured send goes a good part of the stagger
// period after the first.
func TestFewPerUserStartsSpread(t *testing.T) {
	be := &fakeBackend{gap: 2 * time.Millisecond}
	c := &collector{}
	r := newRunner(be, c, 5)
	const users = 8
	cfg := Config{Concurrency: users, Warmup: users, Requests: 2 * users}
	if err := r.Run(context.Background(), context.Background(), time.Now(), cfg); err != nil {
		t.Fatal(err)
	}
	var warmEnd, warmE2E, measured []int64
	for _, rec := range c.recs {
		if rec.Phase == record.PhaseWarmup {
			warmEnd = append(warmEnd, rec.Done)
			warmE2E = append(warmE2E, rec.Done-rec.Sent)
		} else {
			measured = append(measured, rec.Sent)
		}
	}
	if len(warmEnd) != users || len(measured) != 2*users {
		t.Fatalf("%d warmup and %d measured requests, want %d and %d", len(warmEnd), len(measured), users, 2*users)
	}
	slices.Sort(measured)
	if drained := slices.Max(warmEnd); measured[0] < drained {
		t.Errorf("the first measured request went at %d ns, before the warmup drained at %d ns", measured[0], drained)
	}
	// the first users' sends: the k-th waits k/N of the period, and timers do not fire early,
	// so the N-th goes at least (N−1)/N of it after the first, less a busy machine's delay of
	// the first (hence a quarter of the least period)
	period := spreadPeriod(&cfg, slices.Min(warmE2E))
	if span, least := measured[users-1]-measured[0], period/4; span < least {
		t.Errorf("the first %d measured sends span %d ns, want at least %d (spread, not a herd)", users, span, least)
	}
}

// TestMidpoint: the warmup's second half is N requests where the warmup has them, so its
// ramp reaches the N users in flight the measured ramp reaches.
func TestMidpoint(t *testing.T) {
	for _, tc := range []struct{ users, warmup, want int }{
		{8, 16, 8}, // the default: the twins
		{8, 24, 12},
		{8, 12, 4},
		{8, 8, 1}, // a sweep's point: all but the first
		{8, 4, 1},
		{8, 2, 1},
	} {
		s := &state{cfg: Config{Concurrency: tc.users, Warmup: tc.warmup}}
		if got := s.midpoint(); got != tc.want {
			t.Errorf("%d users, warmup %d: midpoint %d, want %d", tc.users, tc.warmup, got, tc.want)
		}
	}
}

// TestSpreadPeriod: one request time with four measured requests per user or more, or a
// timed run; with fewer, in proportion, so the ramp is the same share of the window.
func TestSpreadPeriod(t *testing.T) {
	const T = 1000
	for _, tc := range []struct {
		c    Config
		want int64
	}{
		{Config{Concurrency: 8, Requests: 32}, T},
		{Config{Concurrency: 8, Requests: 800}, T},
		{Config{Concurrency: 8, Duration: time.Second}, T},
		{Config{Concurrency: 8, Requests: 24}, 3 * T / 4},
		{Config{Concurrency: 8, Requests: 16}, T / 2},
		{Config{Concurrency: 8, Requests: 8}, T / 4},
		{Config{Concurrency: 1 << 20, Requests: 1}, 1},
	} {
		if got := spreadPeriod(&tc.c, T); got != tc.want {
			t.Errorf("%d users, %d requests, duration %v: period %d, want %d", tc.c.Concurrency, tc.c.Requests, tc.c.Duration, got, tc.want)
		}
	}
}

// TestWarmupAutoEndsWithARamp: once warming stops, N more warmup requests go out after the
// warmup drained, spread as the measured phase's first requests will be, and the measured
// phase waits for them to drain in turn.
func TestWarmupAutoEndsWithARamp(t *testing.T) {
	be := &fakeBackend{gap: 2 * time.Millisecond}
	c := &collector{}
	r := newRunner(be, c, 5)
	const users = 4
	var out Outcome
	r.OnEnd = func(o Outcome) { out = o }
	cfg := Config{Concurrency: users, WarmupAuto: true, WarmupMin: users, WarmupMax: 3 * users, Requests: 4 * users}
	if err := r.Run(context.Background(), context.Background(), time.Now(), cfg); err != nil {
		t.Fatal(err)
	}
	warm := map[int]*record.Record{}
	var measured []int64
	for _, rec := range c.recs {
		if rec.Phase == record.PhaseWarmup {
			warm[rec.ID] = rec
		} else {
			measured = append(measured, rec.Sent)
		}
	}
	n := out.WarmupRequests
	if len(warm) != n || n < users+users || out.WarmupStop == "" {
		t.Fatalf("%d warmup records, warmup %d (%s), want the judged part and a tail of %d", len(warm), n, out.WarmupStop, users)
	}
	var judgedEnd, tailEnd int64
	var tail, tailE2E []int64
	for id, rec := range warm {
		if id < n-users {
			judgedEnd = max(judgedEnd, rec.Done)
			continue
		}
		tail = append(tail, rec.Sent)
		tailE2E = append(tailE2E, rec.Done-rec.Sent)
		tailEnd = max(tailEnd, rec.Done)
	}
	slices.Sort(tail)
	if tail[0] < judgedEnd {
		t.Errorf("the warmup's tail began at %d ns, before the judged warmup drained at %d ns", tail[0], judgedEnd)
	}
	if span, least := tail[users-1]-tail[0], spreadPeriod(&cfg, slices.Min(tailE2E))/4; span < least {
		t.Errorf("the tail's sends span %d ns, want at least %d (spread as the measured start)", span, least)
	}
	if first := slices.Min(measured); first < tailEnd {
		t.Errorf("the first measured request went at %d ns, before the tail drained at %d ns", first, tailEnd)
	}
}
