package stat

import (
	"math"
	"testing"
)

// LeastSquares recovers exact coefficients by hand, and refuses collinear or constant columns.
func TestLeastSquaresByHand(t *testing.T) {
	x1 := []float64{-2, -1, 0, 1, 2}
	x2 := []float64{1, -1, 0, -1, 1} // orthogonal to x1, not to a constant: centred below
	m := Mean(x2)
	for i := range x2 {
		x2[i] -= m
	}
	y := make([]float64, len(x1))
	for i := range y {
		y[i] = 2*x1[i] - 3*x2[i]
	}
	b, ok := LeastSquares(y, [][]float64{x1, x2})
	if !ok || math.Abs(b[0]-2) > 1e-12 || math.Abs(b[1]+3) > 1e-12 {
		t.Fatalf("y = 2·x1 − 3·x2: got %v, %v", b, ok)
	}
	// one column: Σxy/Σx² = (2·10)/10
	if b, ok := LeastSquares(y, [][]float64{x1}); !ok || math.Abs(b[0]-2) > 1e-12 {
		t.Errorf("y on x1 alone: got %v, %v; want [2]", b, ok)
	}
	twice := []float64{-4, -2, 0, 2, 4}
	if b, ok := LeastSquares(y, [][]float64{x1, twice}); ok {
		t.Errorf("collinear columns: got %v, want singular", b)
	}
	nearly := []float64{-4, -2, 1e-6, 2, 4} // 1 − R² of it on x1 is 2.5e-14
	if b, ok := LeastSquares(y, [][]float64{x1, nearly}); ok {
		t.Errorf("nearly collinear columns: got %v, want singular", b)
	}
	if b, ok := LeastSquares(y, [][]float64{{0, 0, 0, 0, 0}}); ok {
		t.Errorf("a column with no spread: got %v, want singular", b)
	}
}

// AdjustByChanges fits a covariate to the point-to-point changes: one that tracks y at every
// point is taken out as Adjust would, and one that only crept up while y stepped takes under
// half of the step, where Adjust gives it more than half.
func TestAdjustByChanges(t *testing.T) {
	x := []float64{3, 7, 2, 9, 4, 8, 1, 6, 5, 10, 2, 7}
	y := make([]float64, len(x))
	for i := range y {
		y[i] = 100 + 2*x[i]
	}
	if a := AdjustByChanges(y, [][]float64{x}, 1); len(a.Coef) != 1 || math.Abs(a.Coef[0]-2) > 1e-9 {
		t.Errorf("y = 100 + 2x: coefficients %v, want [2]", a.Coef)
	}
	// y steps by 10 after the sixth point and wobbles ±1; the covariate creeps up by 1 a
	// point, with wobbles of its own that y does not share
	wob := []float64{1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1}
	cw := []float64{0, 0.5, 0.5, -0.5, -0.5, 0.5, 0.5, -0.5, -0.5, 0.5, 0.5, -0.5}
	for i := range y {
		y[i] = 100 + wob[i]
		if i >= 6 {
			y[i] += 10
		}
		x[i] = float64(i) + cw[i]
	}
	lv, ch := Adjust(y, [][]float64{x}, 1), AdjustByChanges(y, [][]float64{x}, 1)
	// half the step is what the steady check asks of a covariate before it explains a drift
	if len(lv.Share) != 1 || lv.Share[0] < 5 {
		t.Fatalf("fitted to levels, the creeping covariate took %v of the step of 10, want half or more", lv.Share)
	}
	if len(ch.Share) != 1 || math.Abs(ch.Share[0]) >= 5 {
		t.Errorf("fitted to changes, the creeping covariate took %v of the step of 10, want under half (levels: %v)", ch.Share, lv.Share)
	}
}
