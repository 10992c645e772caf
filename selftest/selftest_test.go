package selftest

import (
	"testing"
	"time"
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
