package metrics

import (
	"slices"
	"testing"
)

func TestPareto(t *testing.T) {
	// (throughput, per-user speed): the dominated, the ineligible (which would dominate
	// everything) and a tie
	x := []float64{100, 200, 150, 300, 1000, 300}
	y := []float64{50, 40, 30, 20, 1000, 20}
	ok := []bool{true, true, true, true, false, true}
	got := Pareto(x, y, ok)
	want := []bool{true, true, false, true, false, true}
	if !slices.Equal(got, want) {
		t.Errorf("Pareto = %v, want %v", got, want)
	}
}
