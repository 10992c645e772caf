package metrics

import (
	"math"
	"testing"
)

// TestAtLoad: a window with tokens at one rate throughout is at load (share 1, also with
// noise); one whose first half held no measured token, as a point queued behind its warmup,
// has share 0.5; a drain tail of falling rate lowers it a little.
func TestAtLoad(t *testing.T) {
	const s = int64(1e9)
	fill := func(from, to int64, every int64, n func(t int64) int32) *tokenHist {
		var h tokenHist
		for t := from; t < to; t += every {
			h.add(t, n(t))
		}
		return &h
	}
	one := func(int64) int32 { return 1 }
	noisy := func(t int64) int32 { return int32(1 + (t/7e6)%3) } // 1, 2, 3 tokens
	for _, c := range []struct {
		name     string
		h        *tokenHist
		lo, hi   float64
		from, to int64
	}{
		{"steady", fill(0, 10*s, 5e6, one), 0.99, 1.01, 0, 10 * s},
		{"noisy", fill(0, 10*s, 5e6, noisy), 0.95, 1.01, 0, 10 * s},
		{"dead first half", fill(5*s, 10*s, 5e6, one), 0.49, 0.51, 0, 10 * s},
		{"drain", fill(0, 10*s, 5e6, func(t int64) int32 {
			if t > 9*s {
				return 1 // half the rate in the last tenth
			}
			return 2
		}), 0.9, 1.01, 0, 10 * s},
	} {
		got, ok := c.h.atLoad(c.from, c.to)
		if !ok || got < c.lo || got > c.hi || math.IsNaN(got) {
			t.Errorf("%s: at-load share %v (ok %v), want in [%v, %v]", c.name, got, ok, c.lo, c.hi)
		}
	}
	var empty tokenHist
	if _, ok := empty.atLoad(0, s); ok {
		t.Error("an empty window has an at-load share")
	}
}
