package metrics

import (
	"math"
	"slices"

	"servebench/stat"
)

// DefaultPercentiles is the percentile set used when Options.Percentiles is empty
// (docs/design/METRICS.md "Statistics": p50, p90, p95, p99, p99.9).
var DefaultPercentiles = []float64{50, 90, 95, 99, 99.9}

// Percentile is one percentile of a distribution: P in percent (50 is the median) and its value.
type Percentile struct {
	P float64 `json:"p"`
	V float64 `json:"v"`
}

// Stat describes one distribution. Values are in the metric's own unit: nanoseconds for
// times, tokens/s for rates, tokens for token counts.
//
// An empty set has N == 0 and every other field zero; renderers print it as null or "—",
// never as 0 (docs/design/METRICS.md: "An empty set reports null, never 0").
type Stat struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	// Std is the population standard deviation, sqrt(Σ(x−mean)²/n) (ddof=0). We chose it over
	// the sample std (n−1) because vLLM computes numpy's np.std, which is the population
	// std, and users put our JSON next to vLLM's.
	Std float64 `json:"std"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Median is p50, always computed (vLLM reports median_* whatever the percentile set).
	Median      float64      `json:"median"`
	Percentiles []Percentile `json:"percentiles"`
}

// Valid reports whether the distribution has at least one value.
func (s Stat) Valid() bool { return s.N > 0 }

// Percentile returns the value of percentile p (in percent) when p was in the computed set.
func (s Stat) Percentile(p float64) (float64, bool) {
	for _, q := range s.Percentiles {
		if q.P == p {
			return q.V, s.N > 0
		}
	}
	return 0, false
}

// sample is the values of one distribution, kept exact until Summary (percentiles are exact:
// no sketch). Values are float64 so that every int64 nanosecond count below 2^53 ns (104 days)
// is held exactly and fractional values (TPOT, ITL (token)) need no rounding.
type sample []float64

func (s *sample) add(v float64) { *s = append(*s, v) }

// stat sorts the sample in place and describes it.
func (s sample) stat(ps []float64) Stat {
	if len(s) == 0 {
		return Stat{}
	}
	slices.Sort(s)
	st := Stat{N: len(s), Min: s[0], Max: s[len(s)-1]}
	var sum float64
	for _, v := range s {
		sum += v
	}
	st.Mean = sum / float64(len(s))
	var ss float64 // two-pass: Σ(x−mean)², stable where Σx² − n·mean² would cancel
	for _, v := range s {
		d := v - st.Mean
		ss += d * d
	}
	st.Std = math.Sqrt(ss / float64(len(s)))
	st.Median = Quantile(s, 50)
	st.Percentiles = make([]Percentile, len(ps))
	for i, p := range ps {
		st.Percentiles[i] = Percentile{P: p, V: Quantile(s, p)}
	}
	return st
}

// Quantile returns percentile p (0..100) of sorted values, exactly: Hyndman–Fan type 7,
// numpy's default "linear" method. With n values the virtual index is h = (n−1)·p/100 and
// the result is x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]); so p50 of [1,2,3,4] is 2.5. An empty
// slice has no quantile: NaN. This is the module's one quantile: compare's bootstrap, the
// report's charts and selftest's error figures call it too.
func Quantile(sorted []float64, p float64) float64 {
	return stat.Quantile(sorted, p)
}

// quantileAt is quantile over n sorted values that at reads by rank, for distributions that
// are not one slice (mergedStat).
func quantileAt(n int, p float64, at func(int) float64) float64 { return stat.QuantileAt(n, p, at) }
