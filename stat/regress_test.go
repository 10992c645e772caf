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
