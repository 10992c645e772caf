package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"servebench/metrics"
)

func vals(xs ...float64) []runValue {
	out := make([]runValue, len(xs))
	for i, x := range xs {
		out[i] = runValue{V: x, Run: i}
		out[i].Log = math.Log(x)
	}
	return out
}

// A run 30% off from four runs that agree within 0.5% is left out and named; its side keeps
// two; one such run on each side does not mask the other's; runs that merely spread, or a
// side of two, keep every run.
func TestDropOutliers(t *testing.T) {
	b, c, out := dropOutliers(vals(225, 291, 224.5), vals(225.5, 224.8, 225.2), 0.05, defaultKnobs)
	if len(out) != 1 || out[0].Side != "base" || out[0].Run != 1 || len(b) != 2 || len(c) != 3 || math.Abs(out[0].Dev-0.295) > 0.01 {
		t.Errorf("one disturbed base run: kept %d+%d, outliers %+v", len(b), len(c), out)
	}
	_, _, out = dropOutliers(vals(210.7, 223.6, 224.1), vals(212.3, 223.7, 223.6), 0.05, defaultKnobs)
	if len(out) != 2 {
		t.Errorf("one disturbed run a side: outliers %+v, want both", out)
	}
	if _, _, out = dropOutliers(vals(100, 104, 97), vals(101, 98, 103), 0.05, defaultKnobs); len(out) != 0 {
		t.Errorf("runs that spread 3%%: outliers %+v", out)
	}
	if _, _, out = dropOutliers(vals(100, 150), vals(100, 100.1, 99.9), 0.05, defaultKnobs); len(out) != 0 {
		t.Errorf("a side of two: outliers %+v", out)
	}
}

// The outlier rule's false-alarm rate: runs drawn from one normal distribution (3, 3 and 6, 6
// runs a side) have a run left out in about 2·outlier_alpha of the comparisons (outlier_alpha
// per side), and not much more.
func TestOutlierFalseAlarms(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, k := range []int{3, 6} {
		n, hits := 4000, 0
		for range n {
			draw := func() []runValue {
				xs := make([]float64, k)
				for i := range xs {
					xs[i] = 100 * math.Exp(0.05*rng.NormFloat64())
				}
				return vals(xs...)
			}
			if _, _, out := dropOutliers(draw(), draw(), 0.05, defaultKnobs); len(out) > 0 {
				hits++
			}
		}
		rate := float64(hits) / float64(n)
		t.Logf("%d runs a side, 5%% run-to-run spread: a run left out in %.2f%% of %d comparisons", k, 100*rate, n)
		if rate > 2.5*defaultKnobs.outlierAlpha {
			t.Errorf("%d runs a side: outliers in %.2f%% of comparisons, want about %g%%", k, 100*rate, 200*defaultKnobs.outlierAlpha)
		}
	}
}

// A side whose run was not steady, or invalidated, makes the verdict provisional and says
// which run and why.
func TestProvisional(t *testing.T) {
	ok := metrics.RunSummary{Run: 0, Summary: &metrics.Summary{Completed: 10}}
	drift := metrics.RunSummary{Run: 1, Summary: &metrics.Summary{Completed: 10, Steadiness: &metrics.Steadiness{Tested: true,
		Drifts: []metrics.Drift{{Metric: "ttft", Direction: "rising"}}}}}
	cached := metrics.RunSummary{Run: 2, Summary: &metrics.Summary{Completed: 10, Warnings: []metrics.Warning{
		{Level: metrics.Invalidates, Text: "the server served 90 of 100 prompt tokens (90%) from its prefix cache: TTFT measures cache hits"}}}}
	if p := provisional([]metrics.RunSummary{ok}, []metrics.RunSummary{ok}); p != nil {
		t.Errorf("steady, valid: %v", p)
	}
	p := strings.Join(provisional([]metrics.RunSummary{ok, drift}, []metrics.RunSummary{cached}), "; ")
	if !strings.Contains(p, "base not steady (run 2: ttft rising)") || !strings.Contains(p, "candidate invalid (run 3: the server served 90 of 100 prompt tokens (90%) from its prefix cache)") {
		t.Errorf("provisional: %q", p)
	}
}
