package stat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestQuantileHand checks type 7 against values worked out by hand (and by numpy's
// np.percentile, method "linear").
func TestQuantileHand(t *testing.T) {
	cases := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 100, 4},
		{[]float64{1, 2, 3, 4}, 25, 1.75},       // h = 0.75
		{[]float64{10, 20, 30, 40, 50}, 90, 46}, // h = 3.6
		{[]float64{7}, 99, 7},
		{[]float64{1, 1, 1, 5}, 99, 4.88}, // h = 2.97
	}
	for _, c := range cases {
		if got := Quantile(c.xs, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v, %v) = %v, want %v", c.xs, c.p, got, c.want)
		}
		if got := SelectQuantile(slices.Clone(c.xs), c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("SelectQuantile(%v, %v) = %v, want %v", c.xs, c.p, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 50)) || !math.IsNaN(SelectQuantile(nil, 50)) {
		t.Error("no values must have no quantile (NaN)")
	}
}

// TestSelectQuantileIsQuantile checks that the selection gives the sort's result to the last
// bit, over random samples with ties (small ones, and large ones where it selects within a
// sample first), at the percentiles servebench reports.
func TestSelectQuantileIsQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 330 {
		n := 1 + rng.IntN(200)
		if trial >= 300 { // large enough for the selection to sample first (over 600 values)
			n = 601 + rng.IntN(30000)
		}
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(rng.ExpFloat64()*20) / 4 // ties are common
		}
		sorted := slices.Sorted(slices.Values(xs))
		for _, p := range []float64{0, 0.1, 1, 25, 50, 90, 95, 99, 99.9, 100, 100 * rng.Float64()} {
			if got, want := SelectQuantile(slices.Clone(xs), p), Quantile(sorted, p); got != want {
				t.Fatalf("trial %d, n %d, p %v: SelectQuantile %v, Quantile %v", trial, n, p, got, want)
			}
		}
	}
}
