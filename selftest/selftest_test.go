package selftest

import (
	"testing"
	"time"

	"servebench/record"
)

func TestMaxInFlight(t *testing.T) {
	// an end and a start at the same instant do not overlap
	if got := maxInFlight([][2]int64{{1, 5}, {2, 3}, {3, 4}, {5, 6}}); got != 2 {
		t.Errorf("max in flight %d, want 2", got)
	}
	if got := maxInFlight(nil); got != 0 {
		t.Errorf("max in flight of nothing %d", got)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []func(*Config){
		func(c *Config) { c.Points = nil },
		func(c *Config) { c.Points = []int{0} },
		func(c *Config) { c.ITLs = []time.Duration{-1} },
		func(c *Config) { c.Tokens = 1 },
		func(c *Config) { c.Rounds = 0 },
		func(c *Config) { c.TTFT = 0 },
	} {
		cfg := Default()
		c(&cfg)
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	cfg := Default()
	if err := cfg.Validate(); err != nil {
		t.Errorf("the default: %v", err)
	}
}

// A client stamp between an event's write began and written is early by nothing, whatever its
// error against written; one before the write began is early by the difference.
func TestEarlyStamp(t *testing.T) {
	ms := int64(time.Millisecond)
	wall0 := 1000 * ms
	rec := record.Record{Phase: record.PhaseMeasure, Sent: 1 * ms, Dispatched: 1 * ms, Done: 40 * ms,
		Events: []record.Event{{T: 10 * ms}, {T: 20 * ms}}}
	var a pointAcc
	// event 0 read 5 ms before the simulator's stamp after the write (it ran late), inside
	// the bracket; event 1 read 3 ms before its write began
	a.add(&rec, []int64{wall0 + 15*ms, wall0 + 24*ms}, []int64{wall0 + 9*ms, wall0 + 23*ms}, wall0, 0, wall0)
	p := a.row(0, 1)
	if p.Matched != 2 || p.EarlyMaxMs != 3 || p.ErrMaxMs != -4 {
		t.Errorf("matched %d, early %.3f ms, error max %.3f ms; want 2, 3, -4", p.Matched, p.EarlyMaxMs, p.ErrMaxMs)
	}
	var b pointAcc
	b.add(&rec, []int64{wall0 + 15*ms, wall0 + 24*ms}, []int64{wall0 + 9*ms, wall0 + 19*ms}, wall0, 0, wall0)
	if p := b.row(0, 1); p.EarlyMaxMs != 0 {
		t.Errorf("early %.3f ms with every stamp inside its bracket, want 0", p.EarlyMaxMs)
	}
}
