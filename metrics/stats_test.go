package metrics

import (
	"math"
	"testing"
)

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

// Expected values computed by hand with numpy's type 7 rule: h = (n−1)·p/100,
// x[⌊h⌋] + (h−⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]).
func TestQuantileType7(t *testing.T) {
	cases := []struct {
		x    []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 50, 2.5},                        // h = 1.5
		{[]float64{1, 2, 3, 4}, 90, 3.7},                        // h = 2.7
		{[]float64{1, 2, 3, 4}, 99, 3.97},                       // h = 2.97
		{[]float64{1, 2, 3, 4}, 25, 1.75},                       // h = 0.75
		{[]float64{1, 2, 3, 4}, 0, 1},                           // min
		{[]float64{1, 2, 3, 4}, 100, 4},                         // max
		{[]float64{4, 3, 2, 1}, 50, 2.5},                        // order does not matter
		{[]float64{15, 20, 35, 40, 50}, 40, 29},                 // h = 1.6: 20 + 0.6·15
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9.1},     // h = 8.1
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99.9, 9.991}, // h = 8.991
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95, 9.55},    // h = 8.55
		{[]float64{7}, 99, 7},
		{[]float64{10, 10, 10}, 50, 10},
	}
	for _, c := range cases {
		s := sample(append([]float64(nil), c.x...))
		st := s.stat([]float64{c.p})
		if got := st.Percentiles[0].V; !near(got, c.want) {
			t.Errorf("p%v of %v = %v, want %v", c.p, c.x, got, c.want)
		}
	}
}

func TestStatMoments(t *testing.T) {
	s := sample{4, 1, 3, 2}
	st := s.stat(DefaultPercentiles)
	// mean 2.5; population variance ((1.5²+0.5²)·2)/4 = 1.25
	if st.N != 4 || st.Mean != 2.5 || st.Min != 1 || st.Max != 4 || !near(st.Std, math.Sqrt(1.25)) {
		t.Errorf("stat = %+v", st)
	}
	if st.Median != 2.5 {
		t.Errorf("median = %v", st.Median)
	}
	if _, ok := st.Percentile(42); ok {
		t.Error("p42 was not computed but reported ok")
	}
}

func TestStatEmpty(t *testing.T) {
	var s sample
	st := s.stat(DefaultPercentiles)
	if st.Valid() || st.N != 0 || st.Percentiles != nil {
		t.Errorf("empty stat = %+v", st)
	}
	if _, ok := st.Percentile(50); ok {
		t.Error("empty p50 reported ok")
	}
}
