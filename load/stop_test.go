package load

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"servebench/client"
	"servebench/load/pacer"
	"servebench/record"
)

// failing is a backend whose every request fails, after a short delay.
type failing struct{ calls atomic.Int32 }

func (f *failing) Do(ctx context.Context, req *client.Request, obs client.Observer) error {
	f.calls.Add(1)
	obs.Dispatched()
	obs.WroteRequest()
	time.Sleep(time.Millisecond)
	return &client.Error{Class: record.ErrHTTP5xx, Status: 500, Msg: "boom"}
}

func TestErrorStopRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		stop string
		max  int
	}{
		{"max-errors", Config{Concurrency: 2, Requests: 1000, MaxErrors: 5}, StopMaxErrors, 10},
		{"max-error-rate", Config{Concurrency: 2, Requests: 1000, MaxErrorRate: 0.5}, StopMaxErrorRate, errorRateMin + 5},
	} {
		c := &collector{}
		r := newRunner(&failing{}, c, 1)
		var reason, detail string
		r.OnEnd = func(o Outcome) { reason, detail = o.Stop, o.StopDetail }
		if err := r.Run(context.Background(), context.Background(), time.Now(), tc.cfg); err != nil {
			t.Fatal(err)
		}
		if reason != tc.stop || detail == "" || len(c.recs) > tc.max {
			t.Errorf("%s: stop %q (%s) after %d records", tc.name, reason, detail, len(c.recs))
		}
	}
}

func TestNaturalStopReasons(t *testing.T) {
	be := &fakeBackend{gap: time.Millisecond}
	var reason string
	r := newRunner(be, &collector{}, 1)
	r.OnEnd = func(o Outcome) { reason = o.Stop }
	r.Run(context.Background(), context.Background(), time.Now(), Config{Concurrency: 1, Requests: 3})
	if reason != StopRequests {
		t.Errorf("stop %q, want requests", reason)
	}
	r.Run(context.Background(), context.Background(), time.Now(), Config{Pacer: pacer.NewTrace([]pacer.Arrival{{T: 0}, {T: 0.01}}), Requests: 10})
	if reason != StopSchedule {
		t.Errorf("stop %q, want schedule", reason)
	}
}

// TestDurationStopCancelsAfterGrace: at the end of --duration, in-flight requests get the
// grace period and are then recorded as cancelled, even when every closed-loop user is busy.
func TestDurationStopCancelsAfterGrace(t *testing.T) {
	be := &fakeBackend{gap: 50 * time.Millisecond}
	c := &collector{}
	var reason string
	r := newRunner(be, c, 100)
	r.OnEnd = func(o Outcome) { reason = o.Stop }
	start := time.Now()
	err := r.Run(context.Background(), context.Background(), start, Config{Concurrency: 2, Duration: 100 * time.Millisecond, Grace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("took %v for 100 ms + 50 ms grace", el)
	}
	if reason != StopDuration || len(c.recs) != 2 || c.recs[0].ErrorClass != record.ErrCancelled {
		t.Errorf("stop %q, %d records, first %q", reason, len(c.recs), c.recs[0].ErrorClass)
	}
}

// TestSteadyStatePhasesAndOffset runs in a synctest bubble, as TestSteadyStateFromTimeZero
// does: on the wall clock, beside busy loops, the 300 ms Duration stop beat a starved sender
// (26 requests sent of 30, the runner rightly leaving the rest unsent), and the phases by
// offset are the subject here, not the sender's punctuality.
func TestSteadyStatePhasesAndOffset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		be := &fakeBackend{gap: time.Millisecond}
		c := &collector{}
		t0 := time.Now()
		cfg := Config{Pacer: pacer.Constant{Rate: 100}, Duration: 300 * time.Millisecond,
			WarmupDuration: 100 * time.Millisecond, CooldownDuration: 50 * time.Millisecond, Offset: 20 * time.Millisecond, Grace: time.Second}
		r := newRunner(be, c, 1)
		r.VirtualClock = true
		if err := r.Run(context.Background(), context.Background(), t0, cfg); err != nil {
			t.Fatal(err)
		}
		for _, rec := range c.recs {
			off := time.Duration(rec.Scheduled) - cfg.Offset
			want := record.PhaseMeasure
			switch {
			case off < cfg.WarmupDuration:
				want = record.PhaseWarmup
			case off >= cfg.Duration-cfg.CooldownDuration:
				want = record.PhaseCooldown
			}
			if rec.Phase != want || off < 0 || off%(10*time.Millisecond) != 0 {
				t.Errorf("request at %v (offset %v): phase %s, want %s", time.Duration(rec.Scheduled), off, rec.Phase, want)
			}
		}
		if n := len(c.recs); n < 28 || n > 31 {
			t.Errorf("%d requests in 300 ms at 100 req/s", n)
		}
		bad := cfg
		bad.CooldownDuration = 250 * time.Millisecond
		if bad.Validate() == nil {
			t.Error("warmup + cooldown ≥ duration validated")
		}
	})
}

func TestQualitySampler(t *testing.T) {
	q := QualitySampler{Interval: 5 * time.Millisecond}
	q.Start()
	deadline := time.Now().Add(30 * time.Millisecond)
	for time.Now().Before(deadline) {
		go func() {}()
	}
	qu := q.Stop()
	if qu.Cores < 1 || qu.CPUMean <= 0 || qu.CPUMax < qu.CPUMean || qu.SchedP99 < qu.SchedP50 || qu.SchedMax < qu.SchedP99 {
		t.Errorf("quality %+v", qu)
	}
}

func TestHistQuantile(t *testing.T) {
	counts := []uint64{0, 5, 4, 1}
	bounds := []float64{0, 1, 2, 4, 8}
	for _, tc := range []struct{ p, want float64 }{{0.5, 2}, {0.9, 4}, {0.99, 8}, {1, 8}} {
		if got := histQuantile(counts, bounds, tc.p); got != tc.want {
			t.Errorf("q(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if histQuantile([]uint64{0}, []float64{0, 1}, 0.5) != 0 {
		t.Error("empty histogram")
	}
}

// With T0, every sample is kept as a health window on the run's clock: in time order, each
// ending after T0 and spanning about the interval; on Linux the machine's load average is
// read (steal is a share, 0 to 1) in a window in which the machine's CPU counters moved.
// The test waits until three windows have closed and 100 ms passed, however busy the machine.
func TestQualitySamplerWindows(t *testing.T) {
	t0 := time.Now()
	q := QualitySampler{Interval: 5 * time.Millisecond, T0: t0}
	q.Start()
	for {
		q.mu.Lock()
		n := len(q.windows)
		q.mu.Unlock()
		if n >= 3 && time.Since(t0) > 100*time.Millisecond {
			break
		}
		time.Sleep(time.Millisecond)
	}
	qu := q.Stop()
	ws := qu.Windows
	if len(ws) < 3 {
		t.Fatalf("%d windows", len(ws))
	}
	for i, w := range ws {
		if w.End <= 0 || w.Span <= 0 || w.End > int64(time.Since(t0)) || (i > 0 && w.End <= ws[i-1].End) || w.SchedMax < w.SchedP99 || w.TickLate < 0 {
			t.Errorf("window %d: %+v", i, w)
		}
		if w.HasProc && (w.Steal < 0 || w.Steal > 1 || w.Load1 < 0) {
			t.Errorf("window %d /proc figures: %+v", i, w)
		}
	}
	proc := false
	for _, w := range ws {
		proc = proc || w.HasProc
	}
	if _, err := os.Stat("/proc/loadavg"); err == nil && !proc {
		t.Errorf("Linux with /proc, but no window read the load average and steal over 100 ms: %+v", ws)
	}
	plain := QualitySampler{Interval: 5 * time.Millisecond}
	plain.Start()
	time.Sleep(20 * time.Millisecond)
	if got := plain.Stop(); len(got.Windows) != 0 {
		t.Errorf("without T0: %d windows", len(got.Windows))
	}
}
