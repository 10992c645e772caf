package pacer

import (
	"math"
	"strings"
	"testing"
	"time"
)

// count returns how many arrivals of p fall before offset t.
func count(p Pacer, t time.Duration) int {
	n := 0
	for {
		d, ok := p.Due(n)
		if !ok || d >= t {
			return n
		}
		n++
	}
}

func TestRampTable(t *testing.T) {
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	for _, tc := range []struct {
		name string
		r    Ramp
		n    int
		want time.Duration
	}{
		// flat ramp = constant rate
		{"flat", Ramp{From: 4, To: 4, Over: 10 * time.Second}, 8, 2 * time.Second},
		// 1 → 3 req/s over 10 s: Λ(t) = t + t²/10, Λ(10) = 20; Λ(5) = 7.5
		{"linear mid", Ramp{From: 1, To: 3, Over: 10 * time.Second}, 20, 10 * time.Second},
		{"linear first", Ramp{From: 1, To: 3, Over: 10 * time.Second}, 0, 0},
		// after the ramp the rate stays at To: request 23 is 3 more at 3 req/s, 1 s later
		{"linear after", Ramp{From: 1, To: 3, Over: 10 * time.Second}, 23, 11 * time.Second},
		// 1 → e req/s over 1 s exponential: Λ(1) = e − 1
		{"exp end", Ramp{From: 1, To: math.E, Over: time.Second, Exp: true}, 0, 0},
		// down ramp 3 → 1 over 10 s: Λ(10) = 20 again
		{"linear down", Ramp{From: 3, To: 1, Over: 10 * time.Second}, 20, 10 * time.Second},
		{"exp flat", Ramp{From: 2, To: 2, Over: 5 * time.Second, Exp: true}, 4, 2 * time.Second},
	} {
		got, ok := tc.r.Due(tc.n)
		if !ok || (got-tc.want).Abs() > sec(1e-6) {
			t.Errorf("%s: Due(%d) = %v, want %v", tc.name, tc.n, got, tc.want)
		}
	}
}

func TestRampRateFollowsShape(t *testing.T) {
	lin := Ramp{From: 1, To: 32, Over: 60 * time.Second}
	// linear 1 → 32: rate at 30 s is 16.5; arrivals in [29, 31) ≈ 33
	if n := count(lin, 31*time.Second) - count(lin, 29*time.Second); n < 31 || n > 35 {
		t.Errorf("linear: %d arrivals around 30 s, want ≈ 33", n)
	}
	exp := Ramp{From: 1, To: 32, Over: 60 * time.Second, Exp: true}
	// exponential 1 → 32: rate at 30 s is √32 ≈ 5.66
	if n := count(exp, 31*time.Second) - count(exp, 29*time.Second); n < 10 || n > 13 {
		t.Errorf("exp: %d arrivals around 30 s, want ≈ 11.3", n)
	}
	// totals: linear Λ(60) = 60·(1+32)/2 = 990; exponential Λ(60) = 60·31/ln 32 ≈ 536.7
	if n := count(lin, 60*time.Second); n < 989 || n > 991 {
		t.Errorf("linear total %d, want 990", n)
	}
	if n := count(exp, 60*time.Second); n < 536 || n > 538 {
		t.Errorf("exp total %d, want 537", n)
	}
}

func TestRampPoissonUnitKeepsMean(t *testing.T) {
	r := Ramp{From: 10, To: 100, Over: 100 * time.Second, Unit: NewPoisson(1, 3)}
	// Λ(100) = 100·55 = 5500 expected arrivals; Poisson sd ≈ 74
	if n := count(r, 100*time.Second); math.Abs(float64(n)-5500) > 300 {
		t.Errorf("%d arrivals, want ≈ 5500", n)
	}
}

// TestOffsetsNeverDecrease is the property every pacer must have.
func TestOffsetsNeverDecrease(t *testing.T) {
	for name, p := range map[string]Pacer{
		"constant":    Constant{Rate: 7},
		"poisson":     NewPoisson(50, 1),
		"gamma":       NewGamma(50, 0.3, 2),
		"linear":      Ramp{From: 1, To: 500, Over: 10 * time.Second},
		"linear down": Ramp{From: 500, To: 1, Over: 10 * time.Second},
		"exp":         Ramp{From: 1, To: 500, Over: 10 * time.Second, Exp: true, Unit: NewGamma(1, 0.5, 3)},
		"trace":       NewTrace([]Arrival{{T: 0}, {T: 0}, {T: 0.5}, {T: 2}}),
	} {
		prev := time.Duration(-1)
		for n := 0; n < 20000; n++ {
			d, ok := p.Due(n)
			if !ok {
				break
			}
			if d < prev || d < 0 {
				t.Fatalf("%s: Due(%d) = %v after %v", name, n, d, prev)
			}
			prev = d
		}
	}
}

func TestParseRamp(t *testing.T) {
	r, err := ParseRamp("linear:1..32", 5*time.Minute, nil)
	if err != nil || r.From != 1 || r.To != 32 || r.Exp || r.Over != 5*time.Minute {
		t.Errorf("%+v %v", r, err)
	}
	if r, err := ParseRamp("exp:0.5..8", time.Minute, nil); err != nil || !r.Exp || r.From != 0.5 {
		t.Errorf("%+v %v", r, err)
	}
	for _, bad := range []string{"linear", "linear:1", "sine:1..2", "linear:0..3", "linear:a..3", "exp:1..-2"} {
		if _, err := ParseRamp(bad, time.Minute, nil); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := ParseRamp("linear:1..2", 0, nil); err == nil || !strings.Contains(err.Error(), "--duration") {
		t.Errorf("no duration: %v", err)
	}
}
