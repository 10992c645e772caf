package stat

import "slices"

// Mean is the arithmetic mean of xs; 0 for none.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Median is the middle of xs (the mean of the two middle values for an even count); it
// sorts a copy, leaving xs alone. 0 for none: callers that must tell "none" apart check the
// length first.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return MedianSorted(slices.Sorted(slices.Values(xs)))
}

// MedianSorted is Median of an already sorted slice.
func MedianSorted(s []float64) float64 {
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// RelChange is |b − a| relative to scale, made safe: 0 when both are 0, and scale falling
// back to max(|a|, |b|) when it is 0, so a zero median never gives an infinite change.
func RelChange(a, b, scale float64) float64 {
	d := b - a
	if d < 0 {
		d = -d
	}
	if d == 0 {
		return 0
	}
	if scale < 0 {
		scale = -scale
	}
	if scale == 0 {
		scale = max(absf(a), absf(b))
	}
	return d / scale
}

func absf(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
