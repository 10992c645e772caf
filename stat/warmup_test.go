package stat

import (
	"math"
	"math/rand/v2"
	"testing"
)

// feedWindows streams one request through a fresh judge whose windows' gaps are each
// window's figure (16 equal gaps a window: Min 1, one request in flight), after a first
// request that begins the windows. It returns the number of windows complete when the judge
// said warm, or -1.
func feedWindows(figs []float64) int {
	j := WarmupJudge{Tolerance: 0.1, Min: 1}
	j.Sent(0, 0)
	j.Done(0, 0, []int64{1e6, 2e6})
	j.Sent(1, 2e6)
	t := int64(3e6)
	j.Event(1, t)
	for _, f := range figs {
		for range 16 {
			t += int64(f)
			if j.Event(1, t) {
				return j.Windows()
			}
		}
	}
	return -1
}

func TestFallP(t *testing.T) {
	if p := fallP([]float64{6, 5, 4, 3, 2, 1}); math.Abs(p-1.0/720) > 1e-12 {
		t.Errorf("six falling points: p %v, want 1/720", p)
	}
	if p := fallP([]float64{1, 2, 3}); p != 1 {
		t.Errorf("a rise: p %v, want 1", p)
	}
}

// TestWarmupJudgeNoisyClient: windows that swing by a third from one to the next (a busy
// client) seldom agree within 10%, and the judge warmed to its cap; with no fall across the
// last six it stops from warmupTrendMin windows on. A fall of 15% a window under ±10% noise
// keeps it warming until the fall has ended.
func TestWarmupJudgeNoisyClient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := func(level, share float64) float64 { return level * (1 + share*(2*rng.Float64()-1)) }
	for run := range 20 {
		var flat []float64
		for range 40 {
			flat = append(flat, noisy(5e6, 0.35))
		}
		if got := feedWindows(flat); got < 0 || got > 20 {
			t.Errorf("run %d: a flat series swinging ±35%%: warm after %d windows, want 20 at most", run, got)
		}
		var ramp []float64
		for w := range 15 {
			ramp = append(ramp, noisy(5e6*math.Pow(1.15, float64(15-w)), 0.1))
		}
		for range 20 {
			ramp = append(ramp, noisy(5e6, 0.1))
		}
		if got := feedWindows(ramp); got < 15 {
			t.Errorf("run %d: a fall of 15%% a window over 15 windows: warm after %d windows, inside the fall", run, got)
		}
	}
}
