package stat

import (
	"math"
	"testing"
)

// MLPerf's early-stopping minimum query counts at p99, c = 0.99, d = 0 (LoadGen's table).
func TestEarlyStopMinMatchesMLPerf(t *testing.T) {
	for _, c := range []struct{ t, want int }{
		{0, 459}, {1, 662}, {2, 838}, {5, 1307}, {10, 2010}, {20, 3304}, {50, 6898},
	} {
		if got := EarlyStopMin(c.t, 0.99, 0, EarlyStopConfidence); got != c.want {
			t.Errorf("t = %d: need %d queries, want %d", c.t, got, c.want)
		}
	}
}

// The binomial identity agrees with the continued fraction where both work, and carries on
// where go-moremath's BetaInc gives up (it panics past 200 iterations).
func TestBetaIncFallback(t *testing.T) {
	for _, c := range []struct{ x, a, b float64 }{{0.99, 459, 1}, {0.99, 1300, 6}, {0.5, 10, 10}, {0.9, 30, 4}} {
		got, want := binomTailBeta(c.x, c.a, c.b), BetaInc(c.x, c.a, c.b)
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("I_%g(%g, %g): binomial %v, continued fraction %v", c.x, c.a, c.b, got, want)
		}
	}
	if n := EarlyStopMin(1000, 0.99, 0, EarlyStopConfidence); n < 100000 || n > 110000 {
		t.Errorf("t = 1000: need %d queries, want about 1000/0.01 plus a margin", n)
	}
}

func TestNearestRank(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ p, want float64 }{{50, 3}, {99, 5}, {20, 1}, {21, 2}, {100, 5}} {
		if got, ok := NearestRank(xs, c.p); !ok || got != c.want {
			t.Errorf("p%g = %v (%v), want %v", c.p, got, ok, c.want)
		}
	}
	if _, ok := NearestRank(nil, 99); ok {
		t.Error("p99 of nothing is defined")
	}
}
