package compare

import (
	"strings"
	"testing"
	"time"

	"servebench/metrics"
)

// TestBrieflyDisturbedNamed: runs whose client's record marks them disturbed for less than a
// quarter of the window stay in and are named in one note; a run disturbed for a quarter or
// more is left out, not named there; an undisturbed run is not named.
func TestBrieflyDisturbedNamed(t *testing.T) {
	run := func(i int, secs float64) metrics.RunSummary {
		s := &metrics.Summary{Window: 12 * time.Second, Steadiness: &metrics.Steadiness{}}
		if secs > 0 {
			s.Steadiness.Disturbance = &metrics.Disturbance{Seconds: secs, Why: []string{"scheduling latency"}}
		}
		return metrics.RunSummary{Run: i, Summary: s}
	}
	runs := []metrics.RunSummary{run(0, 0), run(1, 2), run(2, 6), run(3, 0)}
	kept, out := healthyRuns("base", runs, defaultKnobs)
	brief := brieflyDisturbed("base", runs, defaultKnobs)
	if len(kept) != 3 || len(out) != 1 || out[0].Run != 2 {
		t.Fatalf("left out %v, kept %d runs; want run 3 left out and 3 kept", out, len(kept))
	}
	if len(brief) != 1 || brief[0].Run != 1 {
		t.Fatalf("briefly disturbed %v, want run 2 alone", brief)
	}
	r := &Result{Brief: brief}
	r.disturbedNotes()
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "base run 2 (2 s of 12 s)") || !strings.Contains(r.Warnings[0], "scheduling latency") {
		t.Errorf("notes %q, want one naming base run 2 (2 s of 12 s) and why", r.Warnings)
	}
}
