package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"servebench/metrics"
	"servebench/policy"
	"servebench/record"
	"servebench/stat"
)

// side builds a one-run side of n requests whose server reported cached prompt tokens.
func side(n int, cached float64) *Side {
	s := NewSide(&record.Header{Workload: record.Workload{Hash: "sha256:x"}}, metrics.Options{})
	for i := range n {
		t0 := int64(i) * 1e8
		s.Add(&record.Record{ID: i, Phase: record.PhaseMeasure, Sent: t0 + 1, FirstEvent: t0 + 2e7, Done: t0 + 5e7,
			Events:       []record.Event{{T: t0 + 2e7, N: 1}, {T: t0 + 4e7, N: 1}},
			OutputTokens: 2, OutputTokensSource: record.SourceServer, PromptTokens: 64, PromptTokensSource: record.SourceServer,
			Server: map[string]float64{"timings.cache_n": cached}})
	}
	return s
}

// TestPrefixCacheMakesRunsNotComparable checks that a candidate served from the server's prefix
// cache, against a cold baseline, is "not comparable" unless the change is expected.
func TestPrefixCacheMakesRunsNotComparable(t *testing.T) {
	cold, warm := side(20, 1), side(20, 63)
	if r := Compare(cold, warm, Options{}); r.Verdict != NotComparable {
		t.Errorf("cold vs warm cache: verdict %q, differences %+v", r.Verdict, r.Differences)
	}
	if r := Compare(cold, warm, Options{Expect: []string{"prefix_cache"}}); r.Verdict == NotComparable {
		t.Errorf("with --expect-change prefix_cache: still %q", r.Verdict)
	}
	if r := Compare(cold, side(20, 2), Options{}); r.Verdict == NotComparable {
		t.Errorf("two cold runs: %q, differences %+v", r.Verdict, r.Differences)
	}
}

// selectQuantile agrees with the sorted quantile of metrics, the one definition of a percentile.
func TestSelectQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{1, 2, 3, 10, 101, 1000} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Floor(rng.Float64() * 50) // ties too
		}
		sorted := slices.Sorted(slices.Values(xs))
		for _, p := range []float64{0, 1, 50, 90, 99, 99.9, 100} {
			if got, want := selectQuantile(slices.Clone(xs), p), metrics.Quantile(sorted, p); got != want {
				t.Errorf("n %d p%g: %v, want %v", n, p, got, want)
			}
		}
	}
}

// A p99 of fewer than about 600 values has no distribution-free upper bound, so its
// within-run variance is unbounded; a p50 of 96 values and a p99 of 1,000 are bounded.
func TestOrderStatVar(t *testing.T) {
	vals := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		return xs
	}
	if v := orderStatVar(vals(96), 99); !math.IsInf(v, 1) {
		t.Errorf("p99 of 96: %v, want +Inf", v)
	}
	for _, c := range []struct {
		n int
		p float64
	}{{96, 50}, {1000, 99}} {
		if v := orderStatVar(vals(c.n), c.p); !(v > 0) || math.IsInf(v, 0) {
			t.Errorf("p%g of %d: %v, want a finite positive variance", c.p, c.n, v)
		}
	}
}

// Every constant DefaultPolicy lists is an option's default or has a neutral value, so the
// constant ablation (docs/compare-recorded.md) tries each tuned one; With sets it and only it;
// the answers rule's z is the normal quantile of alpha (1.96 at 0.05).
func TestNeutralCoversTunedConstants(t *testing.T) {
	for _, r := range DefaultPolicy.Rules {
		for _, c := range r.Constants {
			v, ok := Neutral[c.Name]
			if c.Kind == "" && !ok {
				t.Errorf("tuned constant %s has no neutral value", c.Name)
			}
			if !ok {
				continue
			}
			q := DefaultPolicy.With(c.Name, v)
			if q.Value(c.Name) != v || DefaultPolicy.Value(c.Name) != c.Value || q.Version == DefaultPolicy.Version {
				t.Errorf("With(%s, %g): %g in %q", c.Name, v, q.Value(c.Name), q.Version)
			}
		}
	}
	for name := range Neutral {
		if _, ok := policy.Policy(DefaultPolicy).Constant(name); !ok {
			t.Errorf("Neutral names %s, which no rule lists", name)
		}
	}
	if z := stat.TQuantile(0.975, math.Inf(1)); math.Abs(z-1.959963984540054) > 1e-9 {
		t.Errorf("z at alpha 0.05: %.12g, want 1.959963984540", z)
	}
}
