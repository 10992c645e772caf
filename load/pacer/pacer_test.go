package pacer

import (
	"math"
	"testing"
	"time"
)

func TestConstant(t *testing.T) {
	p := Constant{Rate: 4}
	for n, want := range []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond, time.Second} {
		if got, ok := p.Due(n); !ok || got != want {
			t.Errorf("Due(%d) = %v, want %v", n, got, want)
		}
	}
}

// gaps returns the first n inter-arrival gaps in seconds.
func gaps(p Pacer, n int) []float64 {
	g := make([]float64, n)
	prev, _ := p.Due(0)
	for i := 1; i <= n; i++ {
		d, _ := p.Due(i)
		if d < prev {
			panic("offsets decreased")
		}
		g[i-1] = (d - prev).Seconds()
		prev = d
	}
	return g
}

func meanVar(x []float64) (m, v float64) {
	for _, a := range x {
		m += a
	}
	m /= float64(len(x))
	for _, a := range x {
		v += (a - m) * (a - m)
	}
	return m, v / float64(len(x))
}

func TestPoissonMeanRate(t *testing.T) {
	g := gaps(NewPoisson(10, 1), 100000)
	m, v := meanVar(g)
	if math.Abs(m-0.1)/0.1 > 0.02 {
		t.Errorf("mean gap %.4f s, want 0.1 s within 2%%", m)
	}
	// exponential: variance = mean^2 (coefficient of variation 1)
	if cv := math.Sqrt(v) / m; math.Abs(cv-1) > 0.05 {
		t.Errorf("coefficient of variation %.3f, want 1", cv)
	}
}

func TestGammaBurstinessChangesVariance(t *testing.T) {
	for _, k := range []float64{0.25, 0.5, 2, 4} {
		g := gaps(NewGamma(5, k, 7), 100000)
		m, v := meanVar(g)
		if math.Abs(m-0.2)/0.2 > 0.03 {
			t.Errorf("k=%v: mean gap %.4f, want 0.2", k, m)
		}
		// gamma(k, θ): CV^2 = 1/k
		if cv2 := v / (m * m); math.Abs(cv2-1/k)/(1/k) > 0.08 {
			t.Errorf("k=%v: CV² = %.3f, want %.3f", k, cv2, 1/k)
		}
	}
}

func TestSeededAndRepeatable(t *testing.T) {
	a, b, c := NewPoisson(3, 42), NewPoisson(3, 42), NewPoisson(3, 43)
	// query out of order: the schedule is a pure function of (seed, n)
	da, _ := a.Due(500)
	for n := 0; n < 500; n++ {
		b.Due(n)
	}
	db, _ := b.Due(500)
	dc, _ := c.Due(500)
	if da != db || da == dc {
		t.Fatalf("Due(500): %v %v %v", da, db, dc)
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		kind string
		rate float64
		k    float64
	}{{"poisson", 0, 1}, {"poisson", math.Inf(1), 1}, {"gamma", 1, 0}, {"weird", 1, 1}} {
		if _, err := New(tc.kind, tc.rate, tc.k, 1); err == nil {
			t.Errorf("New(%q, %v, %v) gave no error", tc.kind, tc.rate, tc.k)
		}
	}
}
