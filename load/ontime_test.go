package load

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"servebench/load/pacer"
)

// TestWaitUntilNeverEarly: waitUntil returns at its deadline or after it, whether the wait is
// within the system call's reach, longer, or already over.
func TestWaitUntilNeverEarly(t *testing.T) {
	for _, d := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, 900 * time.Microsecond, 3 * time.Millisecond} {
		deadline := time.Now().Add(d)
		waitUntil(deadline, false)
		if early := time.Until(deadline); early > 0 {
			t.Errorf("wait of %v returned %v early", d, early)
		}
	}
}

// TestWaitUntilVirtual: in a synctest bubble the wait ends exactly at its deadline on the
// bubble's clock (a system call's sleep would not move it).
func TestWaitUntilVirtual(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		deadline := time.Now().Add(1500 * time.Microsecond)
		waitUntil(deadline, true)
		if got := time.Now(); !got.Equal(deadline) {
			t.Errorf("returned at %v, want %v", got.Sub(deadline), 0)
		}
	})
}

// TestOpenLoopNeverDispatchesEarly: the open loop makes each request ahead of its arrival,
// and dispatches none before it.
func TestOpenLoopNeverDispatchesEarly(t *testing.T) {
	c := &collector{}
	r := newRunner(&fakeBackend{}, c, 1)
	offsets := []time.Duration{0, time.Millisecond, 1500 * time.Microsecond, 5 * time.Millisecond, 5 * time.Millisecond, 9 * time.Millisecond}
	err := r.Run(context.Background(), context.Background(), time.Now(), Config{Pacer: pacer.Trace{Offsets: offsets}, Requests: len(offsets)})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.recs) != len(offsets) {
		t.Fatalf("%d records, want %d", len(c.recs), len(offsets))
	}
	for _, rec := range c.recs {
		if rec.Scheduled != int64(offsets[rec.ID]) || rec.Dispatched < rec.Scheduled {
			t.Errorf("request %d scheduled %v, dispatched %v: want scheduled %v, dispatched no earlier", rec.ID,
				time.Duration(rec.Scheduled), time.Duration(rec.Dispatched), offsets[rec.ID])
		}
	}
}
