package metrics

// Pareto marks the points on the Pareto frontier of two figures that are both better higher
// (total output throughput and each user's output speed): a point is on it when no other
// eligible point is at least as high in both and higher in one. A point that is not eligible
// (its warnings invalidate it, or a figure is missing) is never on it and hides no other.
func Pareto(x, y []float64, eligible []bool) []bool {
	on := make([]bool, len(x))
	for i := range x {
		if !eligible[i] {
			continue
		}
		on[i] = true
		for j := range x {
			if j == i || !eligible[j] {
				continue
			}
			if x[j] >= x[i] && y[j] >= y[i] && (x[j] > x[i] || y[j] > y[i]) {
				on[i] = false
				break
			}
		}
	}
	return on
}
