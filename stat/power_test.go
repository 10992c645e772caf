package stat

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aclements/go-moremath/stats"
)

func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ df, want float64 }{{1, 12.706}, {4, 2.776}, {10, 2.228}, {math.Inf(1), 1.960}} {
		if got := TQuantile(0.975, c.df); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("t(0.975, %g) = %.4f, want %.3f", c.df, got, c.want)
		}
	}
}

// The power of a two-sample t test, checked against a simulation of the test itself, and the
// runs-needed figure: the smallest n whose exact power reaches 80% (the normal approximation
// the issue found optimistic would give fewer at a larger spread).
func TestTPowerAndRunsNeeded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const sd, eff, n, sims = 0.022, 0.05, 5, 20000
	tc := TQuantile(0.975, 2*n-2)
	hits := 0
	for range sims {
		var a, b [n]float64
		for i := range n {
			a[i], b[i] = sd*rng.NormFloat64(), eff+sd*rng.NormFloat64()
		}
		ma, mb, ss := mean(a[:]), mean(b[:]), 0.0
		for i := range n {
			ss += (a[i]-ma)*(a[i]-ma) + (b[i]-mb)*(b[i]-mb)
		}
		se := math.Sqrt(ss / (2*n - 2) * 2 / n)
		if math.Abs(mb-ma)/se > tc {
			hits++
		}
	}
	sim := float64(hits) / sims
	got := TPower(eff, sd*math.Sqrt(2.0/n), 0.05, 2*n-2)
	if math.Abs(got-sim) > 0.015 {
		t.Errorf("power at n = %d: %.3f, simulated %.3f", n, got, sim)
	}
	// a spread of 0.5 needs hundreds of runs a side: counted, not capped
	for _, sd := range []float64{0.022, 0.04, 0.06, 0.5} {
		n := RunsNeeded(eff, sd, 0.05, 0.8)
		at := func(n int) float64 { return TPower(eff, sd*math.Sqrt(2/float64(n)), 0.05, float64(2*n-2)) }
		if n < 2 || at(n) < 0.8 || (n > 2 && at(n-1) >= 0.8) {
			t.Errorf("sd %g: runs needed %d (power %.3f there, %.3f at one fewer)", sd, n, at(n), at(n-1))
		}
	}
	if n := RunsNeeded(0, 0.04, 0.05, 0.8); n != 0 {
		t.Errorf("effect 0: runs needed %d, want 0 (no count detects it)", n)
	}
	t.Logf("power at 5 runs a side: %.3f (simulated %.3f)", got, sim)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// An interval from one run a side rests on the assumed run-to-run spread; from several, on the
// runs; the delta and interval are finite and contain the truth for a plain case.
func TestTwoLevel(t *testing.T) {
	base := []RunValue{{math.Log(100), 1e-4, 0}, {math.Log(102), 1e-4, 0}, {math.Log(98), 1e-4, 0}}
	cand := []RunValue{{math.Log(1000), 1e-4, 0}, {math.Log(1020), 1e-4, 0}, {math.Log(980), 1e-4, 0}}
	r := TwoLevel(base, cand, 0.05)
	if r.Assumed || r.DF != 4 || r.Lo < 8 || r.Hi > 10 || r.P > 1e-4 {
		t.Errorf("10x at 3 runs a side: %+v", r)
	}
	one := TwoLevel(base[:1], cand[:1], 0.05)
	if !one.Assumed || !(one.Lo < 9 && one.Hi > 9) {
		t.Errorf("one run a side: %+v", one)
	}
}

func TestRelHalfWidth(t *testing.T) {
	// logs 0, ±0.01: s = 0.01, k = 3, t = 4.303 → exp(4.303·0.01/√3) − 1 ≈ 2.52%
	got := RelHalfWidth([]float64{1, math.Exp(0.01), math.Exp(-0.01)}, 0.05)
	if math.Abs(got-0.0251) > 5e-4 {
		t.Errorf("half-width %v, want about 0.0251", got)
	}
	if !math.IsInf(RelHalfWidth([]float64{1}, 0.05), 1) || !math.IsInf(RelHalfWidth([]float64{1, 0}, 0.05), 1) {
		t.Error("one value or a zero gives a finite width")
	}
}

// TestPowerCachesChangeNoResult: TQuantile and TPower, which keep what they computed for a
// df (and a level), answer to the last bit what they compute without their caches (TPower's
// uncached form is its sum written out here, as it was before the cache), asked once and
// asked again.
func TestPowerCachesChangeNoResult(t *testing.T) {
	uncachedPower := func(effect, se, alpha, df float64) float64 {
		lam := math.Abs(effect) / se
		tc := tQuantile(1-alpha/2, df)
		rej := func(s float64) float64 {
			return stats.StdNormal.CDF(lam-tc*s) + stats.StdNormal.CDF(-lam-tc*s)
		}
		lg, _ := math.Lgamma(df / 2)
		logc := math.Log(2*df) - df/2*math.Ln2 - lg
		const steps = 400
		w := 10 / math.Sqrt(2*df)
		lo, hi := math.Max(0, 1-w), 1+w+1/df
		h := (hi - lo) / steps
		var p, mass float64
		for i := range steps {
			s := lo + (float64(i)+0.5)*h
			v := df * s * s
			f := math.Exp(logc + math.Log(s) + (df/2-1)*math.Log(v) - v/2)
			p += f * rej(s) * h
			mass += f * h
		}
		if mass <= 0 {
			return rej(1)
		}
		return math.Min(1, p/mass)
	}
	for range 2 { // the second round reads the caches the first filled
		for _, df := range []float64{1, 2, 3.5, 4, 10, 58, 198} {
			for _, q := range []float64{0.95, 0.975, 0.995} {
				if got, want := TQuantile(q, df), tQuantile(q, df); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("TQuantile(%g, %g) = %v, uncached %v", q, df, got, want)
				}
			}
			for _, effect := range []float64{0, 0.01, 0.05, 0.3} {
				got, want := TPower(effect, 0.02, 0.05, df), uncachedPower(effect, 0.02, 0.05, df)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("TPower(%g, 0.02, 0.05, %g) = %v, uncached %v", effect, df, got, want)
				}
			}
		}
	}
}

// The chance that two servers that do not differ show equivalence (the 90% interval inside
// ±margin at alpha 0.05), checked against a simulation of the two one-sided tests, and
// EquivRuns: the smallest n at which it reaches 80%. The helper's arithmetic for 3 runs a side
// (half-width t(0.95, 4)·s·√(2/3) = 1.74·s) makes a spread of 2.8% the last that can show ±5%.
func TestEquivPowerAndRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	margin := math.Log(1.05)
	for _, c := range []struct {
		sd float64
		n  int
	}{{0.013, 3}, {0.02, 3}, {0.03, 5}} {
		tc := TQuantile(0.95, float64(2*c.n-2))
		const sims = 20000
		hits := 0
		a, b := make([]float64, c.n), make([]float64, c.n)
		for range sims {
			for i := range c.n {
				a[i], b[i] = c.sd*rng.NormFloat64(), c.sd*rng.NormFloat64()
			}
			ma, mb, ss := mean(a), mean(b), 0.0
			for i := range c.n {
				ss += (a[i]-ma)*(a[i]-ma) + (b[i]-mb)*(b[i]-mb)
			}
			se := math.Sqrt(ss / float64(2*c.n-2) * 2 / float64(c.n))
			if d := mb - ma; d-tc*se > -margin && d+tc*se < margin {
				hits++
			}
		}
		sim := float64(hits) / sims
		got := EquivPower(margin, c.sd*math.Sqrt(2/float64(c.n)), 0.05, float64(2*c.n-2))
		if math.Abs(got-sim) > 0.015 {
			t.Errorf("sd %g, %d runs: equivalence power %.3f, simulated %.3f", c.sd, c.n, got, sim)
		}
	}
	at := func(sd float64, n int) float64 {
		return EquivPower(margin, sd*math.Sqrt(2/float64(n)), 0.05, float64(2*n-2))
	}
	for _, sd := range []float64{0.005, 0.013, 0.028, 0.075, 0.2} {
		n := EquivRuns(margin, sd, 0.05, 0.8)
		if n < 2 || at(sd, n) < 0.8 || (n > 2 && at(sd, n-1) >= 0.8) {
			t.Errorf("sd %g: runs %d (power %.3f there, %.3f at one fewer)", sd, n, at(sd, n), at(sd, n-1))
		}
		t.Logf("sd %.3f: %d runs a side", sd, n)
	}
	if n := EquivRuns(0, 0.01, 0.05, 0.8); n != 0 {
		t.Errorf("margin 0: %d runs, want 0 (none)", n)
	}
	if p := at(0.028, 3); p > 0.4 {
		t.Errorf("sd 2.8%% at 3 runs: equivalence power %.3f, want about 0.25", p)
	}
}
