package compare

import (
	"math"
	"math/rand/v2"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// repeatSide builds a side of runs whose TTFT is ttft·(1 + 3% noise): each run 20 requests.
func repeatSide(runs int, ttft float64, seed uint64) *Side {
	rng := rand.New(rand.NewPCG(seed, 3))
	s := NewSide(&record.Header{Workload: record.Workload{Hash: "sha256:x"}}, metrics.Options{})
	for run := range runs {
		f := 1 + 0.03*rng.NormFloat64()
		for i := range 20 {
			t0 := int64(run)*1e10 + int64(i)*1e8 + 1
			first := t0 + int64(ttft*f)
			s.Add(&record.Record{Run: run, ID: i, Phase: record.PhaseMeasure, Sent: t0, FirstEvent: first, Done: first + 2e7,
				Events:       []record.Event{{T: first, N: 1}, {T: first + 2e7, N: 1}},
				OutputTokens: 2, OutputTokensSource: record.SourceServer, PromptTokens: 64, PromptTokensSource: record.SourceServer})
		}
	}
	return s
}

func ttftRow(t *testing.T, r *Result) Row {
	t.Helper()
	for _, row := range r.Rows {
		if row.Metric.Name == "TTFT p50" {
			return row
		}
	}
	t.Fatalf("no TTFT p50 row in %+v", r.Rows)
	return Row{}
}

// Three runs per side cannot detect anything at α = 0.05 (the U test's smallest p is 0.1),
// and say so; twelve runs per side detect a 5% change made on purpose, and with 3% run-to-run
// noise report a detectable change near 5% (80% power) and at most 12 runs needed for it.
func TestPowerOfAComparison(t *testing.T) {
	r := Compare(repeatSide(3, 50e6, 1), repeatSide(3, 51e6, 2), Options{})
	row := ttftRow(t, r)
	if row.Power == nil || !math.IsInf(row.Power.Detectable, 1) || row.Power.RunsNeeded < 4 {
		t.Errorf("3 vs 3 runs, 2%% apart: power %+v; want no detectable change and ≥ 4 runs needed", row.Power)
	}
	r = Compare(repeatSide(12, 50e6, 3), repeatSide(12, 52.5e6, 4), Options{})
	row = ttftRow(t, r)
	if !row.Significant || row.Power == nil || row.Power.Detectable > 0.08 || row.Power.RunsNeeded > 12 {
		t.Errorf("12 vs 12 runs, 5%% apart: significant %v (p %.3g), power %+v", row.Significant, row.P, row.Power)
	}
	t.Logf("12 runs per side, 3%% run-to-run noise: detectable %.1f%%, runs needed for 5%%: %d", 100*row.Power.Detectable, row.Power.RunsNeeded)
}

func TestMinP(t *testing.T) {
	for _, c := range []struct {
		nb, nc int
		want   float64
	}{{3, 3, 0.1}, {4, 4, 2.0 / 70}, {6, 6, 2.0 / 924}, {2, 5, 2.0 / 21}} {
		if got := minP(c.nb, c.nc); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("minP(%d, %d) = %v, want %v", c.nb, c.nc, got, c.want)
		}
	}
}
