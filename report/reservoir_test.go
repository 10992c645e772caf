package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestReservoirAddN: up to exactN copies addN is add called n times, draw for draw; an event of
// 10^12 tokens takes a bounded number of draws, not 10^12, and leaves the share of the sample
// that reservoir sampling gives in expectation.
func TestReservoirAddN(t *testing.T) {
	const capN = 1000
	var a, b reservoir
	ra, rb := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		n := 1 + i%exactN
		for range n {
			a.add(ra, float64(i), capN)
		}
		b.addN(rb, float64(i), n, capN)
	}
	if a.seen != b.seen || !slices.Equal(a.vals, b.vals) {
		t.Fatalf("addN of up to %d copies differs from add: seen %d against %d", exactN, b.seen, a.seen)
	}

	var r reservoir
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2 * capN {
		r.add(rng, float64(i), capN)
	}
	start := time.Now()
	r.addN(rng, -1, 1e12, capN)
	took := time.Since(start)
	if want := 2*capN + int(1e12); r.seen != want {
		t.Errorf("seen %d, want %d", r.seen, want)
	}
	kept := 0
	for _, v := range r.vals {
		if v == -1 {
			kept++
		}
	}
	// after 2·cap values, 10^12 copies leave cap·(1 − 2cap/(2cap+10^12)) of them in expectation:
	// all but a handful of slots
	if want := capN * (1 - float64(2*capN)/(2*capN+1e12)); math.Abs(float64(kept)-want) > 5 {
		t.Errorf("%d of %d slots hold the repeated value, want about %.1f", kept, capN, want)
	}
	t.Logf("10^12 copies in %v", took)

	// a huge count on a nearly full int, and on an empty reservoir, stays in range
	var e reservoir
	e.addN(rng, 7, math.MaxInt, capN)
	if len(e.vals) != capN || e.seen != math.MaxInt {
		t.Errorf("from empty: %d values, seen %d", len(e.vals), e.seen)
	}
	e.addN(rng, 8, math.MaxInt, capN)
	if e.seen != math.MaxInt {
		t.Errorf("seen %d after a second huge count, want it held at MaxInt", e.seen)
	}
}
