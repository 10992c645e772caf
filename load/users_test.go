package load

import (
	"context"
	"testing"
	"time"

	"servebench/record"
)

// runWithin runs r with cfg and fails the test when it has not returned within limit (the
// run is left to finish in the background).
func runWithin(t *testing.T, r *Runner, soft, hard context.Context, cfg Config, limit time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.Run(soft, hard, time.Now(), cfg) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(limit):
		t.Fatalf("%d users: the run had not returned after %v", cfg.Concurrency, limit)
	}
}

// TestHugeUserCountStartsLazily: a hundred million closed-loop users (the documented maximum)
// with 3 requests to send start no more users than can get a request, so the run ends as
// one of 4 users does; and with a duration, a stop (Ctrl-C) ends the starting of users at
// once. Each used to start a goroutine per user before the first could finish, for minutes,
// deaf to signals. The limit is generous against a reference run of 4 users.
func TestHugeUserCountStartsLazily(t *testing.T) {
	bg := context.Background()
	start := time.Now()
	runWithin(t, newRunner(&fakeBackend{gap: time.Millisecond}, &collector{}, 2), bg, bg, Config{Concurrency: 4, Requests: 3}, time.Minute)
	limit := max(30*time.Since(start), 20*time.Second)

	c := &collector{}
	runWithin(t, newRunner(&fakeBackend{gap: time.Millisecond}, c, 2), bg, bg, Config{Concurrency: 100_000_000, Requests: 3}, limit)
	if len(c.recs) != 3 {
		t.Errorf("%d records, want 3", len(c.recs))
	}

	for _, stages := range [][]record.Stage{nil, {{Users: 100_000_000, Duration: int64(time.Hour)}}} {
		c = &collector{}
		soft, stop := context.WithCancel(bg)
		time.AfterFunc(50*time.Millisecond, stop)
		cfg := Config{Concurrency: 100_000_000, Duration: time.Hour, Grace: time.Millisecond, Stages: stages}
		runWithin(t, newRunner(&fakeBackend{gap: time.Millisecond}, c, 2), soft, bg, cfg, limit)
		if len(c.recs) == 0 || len(c.recs) >= 100_000_000 {
			t.Errorf("stages %v: %d records after a stop at 50 ms", stages, len(c.recs))
		}
	}
}

// TestCancelledBy: the run's outcome says what cancelled the requests in flight: the end of
// the grace period after a first stop, or a second stop (the hard context) at once.
func TestCancelledBy(t *testing.T) {
	for _, c := range []struct {
		grace time.Duration
		hard  bool
		want  string
	}{{20 * time.Millisecond, false, CancelGrace}, {time.Hour, true, CancelHard}} {
		soft, stop := context.WithCancel(context.Background())
		hard, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Millisecond, stop)
		if c.hard {
			time.AfterFunc(60*time.Millisecond, cancel)
		}
		r := newRunner(&fakeBackend{gap: 50 * time.Millisecond}, &collector{}, 1000)
		var got Outcome
		r.OnEnd = func(o Outcome) { got = o }
		runWithin(t, r, soft, hard, Config{Concurrency: 2, Requests: 100, Grace: c.grace}, time.Minute)
		if got.CancelledBy != c.want || got.Stop != StopInterrupted {
			t.Errorf("grace %v, second stop %v: cancelled by %q (stop %q), want %q", c.grace, c.hard, got.CancelledBy, got.Stop, c.want)
		}
		cancel()
	}
}
