package compare

import (
	"math"

	"servebench/stat"
)

// Metrics that can be 0. A run whose requests met no SLO has a goodput of 0; the geometric mean
// cannot hold it, and leaving the run out would report the side's other runs as if the zero
// had not happened. Such a metric is compared on the arithmetic means of its runs' values:
// the delta is (mean_c − mean_b) / mean_b, its interval Student's t of the difference of
// means with the pooled run-to-run variance (kb + kc − 2 degrees of freedom) over mean_b; with
// one run a side the spread is assumed (the policy's assumed_run_sd of the larger mean). A base mean of
// 0 gives no relative delta: the interval is unbounded unless both sides are 0.

// hasZero reports whether a run's value is 0.
func hasZero(vs []runValue) bool {
	for _, v := range vs {
		if v.V == 0 {
			return true
		}
	}
	return false
}

// arithRow compares a metric on the arithmetic means of its runs' values.
func arithRow(m Metric, bv, cv []runValue, alpha, runSD float64) Row {
	mean := func(vs []runValue) float64 {
		s := 0.0
		for _, v := range vs {
			s += v.V
		}
		return s / float64(len(vs))
	}
	mb, mc := mean(bv), mean(cv)
	kb, kc := float64(len(bv)), float64(len(cv))
	ss := 0.0
	for _, v := range bv {
		ss += (v.V - mb) * (v.V - mb)
	}
	for _, v := range cv {
		ss += (v.V - mc) * (v.V - mc)
	}
	df := kb + kc - 2
	var v float64
	assumed := df == 0
	if assumed {
		v, df = math.Pow(runSD*math.Max(mb, mc), 2), math.Inf(1)
	} else {
		v = ss / df
	}
	se := math.Sqrt(v * (1/kb + 1/kc))
	tc := stat.TQuantile(1-alpha/2, df)
	d := mc - mb
	row := Row{Metric: m, Arithmetic: true, Assumed: assumed,
		Base: Estimate{mb, mb - tc*math.Sqrt(v/kb), mb + tc*math.Sqrt(v/kb), len(bv)},
		Cand: Estimate{mc, mc - tc*math.Sqrt(v/kc), mc + tc*math.Sqrt(v/kc), len(cv)},
		P:    1}
	if se > 0 {
		row.P = 2 * (1 - stat.TCDF(math.Abs(d)/se, df))
	} else if d != 0 {
		row.P = 0
	}
	t1 := stat.TQuantile(1-alpha, df)
	switch {
	case mb > 0:
		row.Delta, row.DeltaLo, row.DeltaHi = d/mb, (d-tc*se)/mb, (d+tc*se)/mb
		row.EqLo, row.EqHi = (d-t1*se)/mb, (d+t1*se)/mb
	case mc == 0:
		row.Delta, row.DeltaLo, row.DeltaHi = 0, 0, 0
		row.EqLo, row.EqHi = 0, 0
	default:
		row.Delta, row.DeltaLo, row.DeltaHi = math.Inf(1), math.Inf(-1), math.Inf(1)
		if d-tc*se > 0 {
			row.DeltaLo = math.Inf(1)
		}
		row.EqLo, row.EqHi = row.DeltaLo, row.DeltaHi
	}
	row.Significant = row.DeltaLo > 0 || row.DeltaHi < 0
	return row
}
