package stat

import "testing"

// TestMedianCI holds the interval's ranks to the binomial table (Conover, Table A3): for n =
// 6 the extremes (coverage 96.9%), for n = 20 ranks 6 and 15 (95.9%), for n = 100 ranks 40
// and 61 (96.5%); below 6 values there is none.
func TestMedianCI(t *testing.T) {
	for _, c := range []struct{ n, lo, hi int }{{6, 1, 6}, {9, 2, 8}, {20, 6, 15}, {100, 40, 61}} {
		xs := make([]float64, c.n)
		for i := range xs {
			xs[i] = float64(i + 1) // the value is its rank
		}
		lo, hi, ok := MedianCI(xs)
		if !ok || lo != float64(c.lo) || hi != float64(c.hi) {
			t.Errorf("n %d: [%v, %v] %v, want ranks %d and %d", c.n, lo, hi, ok, c.lo, c.hi)
		}
	}
	if _, _, ok := MedianCI([]float64{1, 2, 3, 4, 5}); ok {
		t.Error("5 values gave an interval")
	}
}
