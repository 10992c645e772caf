package bench

import (
	"slices"
	"testing"

	"servebench/workload"
)

// TestTwinLengths: from the shortest measured prompt to the longest in equal ratios, each
// with the output length of the measured request nearest in prompt length.
func TestTwinLengths(t *testing.T) {
	var m []workload.Request
	for i, n := range []int{500, 100, 1600, 400, 210, 800} {
		m = append(m, workload.Request{InputTokens: n, OutputTokens: 10 + i})
	}
	for _, c := range []struct {
		n       int
		in, out []int
	}{
		{1, []int{100}, []int{11}},
		{2, []int{100, 1600}, []int{11, 12}},
		{5, []int{100, 200, 400, 800, 1600}, []int{11, 14, 13, 15, 12}},
	} {
		in, out := twinLengths(m, c.n)
		if !slices.Equal(in, c.in) || !slices.Equal(out, c.out) {
			t.Errorf("twinLengths(%d) = %v, %v; want %v, %v", c.n, in, out, c.in, c.out)
		}
	}
}
