package stat

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Two-level intervals for a ratio between two sets of runs.
//
// A run of a server is one draw of a run-level effect (the machine's state, the batch mix, the
// cache, the clocks) plus many requests that share it, correlated with their neighbours. So a
// run's figure (TTFT p99, output tok/s) varies from run to run by more than its requests'
// spread suggests, and the runs, not the requests, are the independent units. The method:
//
//   - each run's figure is taken on the log scale, y_i = log(value of run i), so that a ratio
//     between sides is a difference and a relative spread is one number;
//   - within a run, the figure's sampling variance w_i comes from a block bootstrap of the run's
//     requests (BlockVar: time windows resampled whole, so neighbours stay together);
//   - between runs, the spread is the pooled sample variance s² of y over both sides, with
//     k_b + k_c − 2 degrees of freedom; the per-run variance used is max(s², mean w_i), so a few
//     runs that happen to agree cannot claim less noise than each run's own requests show;
//   - with one run on each side, no run-to-run spread can be seen: the per-run variance is
//     mean w_i + τ², τ being an assumed run-to-run relative spread (AssumedRunSD), and the
//     interval says it rests on that assumption; its t has the degrees of freedom of the
//     within-run estimate (time windows − 1 of the run with the fewest), since w_i is itself
//     estimated from a handful of windows;
//   - the log ratio d = ȳ_c − ȳ_b has standard error √(V (1/k_b + 1/k_c)), and its interval
//     and p are Student's t with the pooled degrees of freedom (normal with one run a side).
//
// We tried the hierarchical bootstrap (resample runs, then requests within each run) first:
// with 3 runs a side it draws from only 10 distinct multisets of runs and shrinks the
// run-to-run variance by (k−1)/k, so its intervals are too narrow exactly at the run counts
// people use. The t interval above is exact for normal run-level log values and uses the
// requests where the runs cannot speak (one run a side, or runs that agree by chance).

// AssumedRunSD is the run-to-run standard deviation of a log figure assumed when neither side
// has two runs (3%: the run-to-run spread of TTFT and throughput on a quiet machine is 1–3%).
const AssumedRunSD = 0.03

// RunValue is one run's figure for the two-level interval: Log = log(value), Within = the
// sampling variance of Log inside the run (BlockVar), 0 when unknown and +Inf when the run
// cannot bound it (a p99 of a few hundred requests), and WithinDF the
// degrees of freedom of that estimate (time windows − 1; 0: unknown).
type RunValue struct {
	Log, Within, WithinDF float64
}

// Ratio is the comparison of one figure between two sets of runs: cand/base − 1 with a
// two-sided interval at the level asked for, the p-value of "no difference", and what it
// rests on.
type Ratio struct {
	Delta, Lo, Hi float64 // cand/base − 1 and its interval
	P             float64
	// LogDiff and SE are d = ȳ_c − ȳ_b and its standard error; DF the t degrees of freedom
	// (+Inf: normal, with the run-to-run spread assumed).
	LogDiff, SE, DF float64
	// RunSD is the per-run standard deviation of the log figure used (√V).
	RunSD float64
	// Assumed is true when no side had two runs and RunSD includes AssumedRunSD.
	Assumed bool
	// Base and Cand are each side's geometric mean over its runs, with the interval of each.
	Base, Cand, BaseLo, BaseHi, CandLo, CandHi float64
}

// TwoLevel compares cand against base (at least one run each) at confidence 1 − alpha,
// assuming AssumedRunSD where no side has two runs.
func TwoLevel(base, cand []RunValue, alpha float64) Ratio {
	return TwoLevelAssuming(base, cand, alpha, AssumedRunSD)
}

// TwoLevelAssuming is TwoLevel with tau the run-to-run standard deviation of a log figure
// assumed where no side has two runs (a policy's own, compare's assumed_run_sd).
func TwoLevelAssuming(base, cand []RunValue, alpha, tau float64) Ratio {
	kb, kc := float64(len(base)), float64(len(cand))
	mb, mc := meanLog(base), meanLog(cand)
	var r Ratio
	ss, within := 0.0, 0.0
	for _, side := range []struct {
		v []RunValue
		m float64
	}{{base, mb}, {cand, mc}} {
		for _, x := range side.v {
			ss += (x.Log - side.m) * (x.Log - side.m)
		}
	}
	r.DF = kb + kc - 2
	within, nw := 0.0, 0.0
	for _, x := range append(slices.Clone(base), cand...) {
		// an infinite within-run variance (a percentile its run cannot bound) is unknown when
		// the runs' spread can speak for it, and makes the interval unbounded when it cannot
		if math.IsInf(x.Within, 1) && r.DF > 0 {
			continue
		}
		within += x.Within
		nw++
	}
	if nw > 0 {
		within /= nw
	}
	v := within + tau*tau
	if r.DF > 0 {
		v = math.Max(ss/r.DF, within)
	} else {
		r.DF, r.Assumed = math.Inf(1), true
		for _, x := range append(slices.Clone(base), cand...) {
			if x.WithinDF > 0 {
				r.DF = math.Min(r.DF, x.WithinDF)
			}
		}
	}
	r.RunSD = math.Sqrt(v)
	r.LogDiff = mc - mb
	r.SE = math.Sqrt(v * (1/kb + 1/kc))
	tc := TQuantile(1-alpha/2, r.DF)
	r.Delta = math.Expm1(r.LogDiff)
	r.Lo, r.Hi = math.Expm1(r.LogDiff-tc*r.SE), math.Expm1(r.LogDiff+tc*r.SE)
	r.P = 1
	if r.SE > 0 {
		r.P = 2 * (1 - TCDF(math.Abs(r.LogDiff)/r.SE, r.DF))
	} else if r.LogDiff != 0 {
		r.P = 0
	}
	r.Base, r.BaseLo, r.BaseHi = sideCI(mb, v, kb, tc)
	r.Cand, r.CandLo, r.CandHi = sideCI(mc, v, kc, tc)
	return r
}

func meanLog(v []RunValue) float64 {
	s := 0.0
	for _, x := range v {
		s += x.Log
	}
	return s / float64(len(v))
}

func sideCI(m, v, k, tc float64) (c, lo, hi float64) {
	h := tc * math.Sqrt(v/k)
	return math.Exp(m), math.Exp(m - h), math.Exp(m + h)
}

// BlockVar is the block-bootstrap variance of a statistic of m blocks: rounds times, m block
// indices are drawn with replacement and stat evaluates them; the variance of the results,
// scaled by m/(m − 1) (the bootstrap's own shrinkage of a mean's variance), is returned.
// ok is false when fewer than half the rounds gave a value or m < 2.
func BlockVar(m int, stat func(pick []int) (float64, bool), rounds int, rng *rand.Rand) (float64, bool) {
	if m < 2 || rounds < 2 {
		return 0, false
	}
	pick := make([]int, m)
	var n, mean, m2 float64
	for range rounds {
		for i := range pick {
			pick[i] = rng.IntN(m)
		}
		x, ok := stat(pick)
		if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		// Welford's running variance
		n++
		d := x - mean
		mean += d / n
		m2 += d * (x - mean)
	}
	if n < float64(rounds)/2 || n < 2 {
		return 0, false
	}
	return m2 / (n - 1) * float64(m) / float64(m-1), true
}

// OneSide is one set of runs' figure on its own: the geometric mean of its runs' values and
// its interval at confidence 1 − alpha, by the rules of TwoLevel for one side: the per-run
// variance is max(s², mean w_i) with k − 1 degrees of freedom, and with one run w_1 + τ²
// (AssumedRunSD, assumed true) with the within-run estimate's degrees of freedom. RunSD is
// √ of the variance used: the run-to-run relative spread of the figure. v must not be empty.
func OneSide(v []RunValue, alpha float64) (c, lo, hi, runSD float64, assumed bool) {
	k := float64(len(v))
	m := meanLog(v)
	ss, within, nw := 0.0, 0.0, 0.0
	for _, x := range v {
		ss += (x.Log - m) * (x.Log - m)
	}
	df := k - 1
	for _, x := range v {
		if math.IsInf(x.Within, 1) && df > 0 {
			continue
		}
		within += x.Within
		nw++
	}
	if nw > 0 {
		within /= nw
	}
	var variance float64
	if df > 0 {
		variance = math.Max(ss/df, within)
	} else {
		variance, df, assumed = within+AssumedRunSD*AssumedRunSD, math.Inf(1), true
		if v[0].WithinDF > 0 {
			df = v[0].WithinDF
		}
	}
	c, lo, hi = sideCI(m, variance, k, TQuantile(1-alpha/2, df))
	return c, lo, hi, math.Sqrt(variance), assumed
}
