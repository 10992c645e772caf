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

// TestDisturbedTailNotCalled: with a run its client's record marks disturbed, a p99 called
// regressed whose median did not regress is inconclusive (and, having moved, holds the
// verdict there) with a note naming the run; one whose median regressed too stands; without
// a disturbed run nothing changes.
func TestDisturbedTailNotCalled(t *testing.T) {
	rows := func() []Row {
		return []Row{
			{Metric: TTFTp50, Change: "~", P: 0.5},
			{Metric: TTFTp99, Change: Regressed, P: 0.0005, Significant: true, Delta: 5.9, DeltaLo: 3.9, DeltaHi: 8.7},
			{Metric: E2Ep50, Change: Regressed, P: 0.001, Significant: true, Delta: 0.7},
			{Metric: E2Ep99, Change: Regressed, P: 0.001, Significant: true, Delta: 0.6, DeltaLo: 0.3, DeltaHi: 0.9},
		}
	}
	r := &Result{Alpha: 0.05, Rows: rows(), Disturbed: []DisturbedRun{{Side: "candidate", Run: 2, Seconds: 12, Window: 18}}}
	r.disturbedTails(nil, nil)
	if got := r.Rows[1].Change; got != Inconclusive {
		t.Errorf("TTFT p99 beside a disturbed run: %s, want inconclusive", got)
	}
	if !blocks(r.Rows[1]) {
		t.Error("the demoted TTFT p99 moved significantly but does not hold the verdict")
	}
	if got := r.Rows[3].Change; got != Regressed {
		t.Errorf("E2E p99 whose median regressed too: %s, want regressed", got)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "TTFT p99 regressed +590.0%") || !strings.Contains(r.Warnings[0], "candidate run 3") {
		t.Errorf("notes %q, want one naming TTFT p99 and candidate run 3", r.Warnings)
	}
	r = &Result{Alpha: 0.05, Rows: rows()}
	r.disturbedTails(nil, nil)
	if r.Rows[1].Change != Regressed || len(r.Warnings) != 0 {
		t.Errorf("without a disturbed run: TTFT p99 %s, notes %q; want regressed, none", r.Rows[1].Change, r.Warnings)
	}
}

// TestDisturbedTailSide: a p99 change is not called when the side whose figure got worse was
// disturbed, briefly too (for more of its window than the 1% a p99 holds); a disturbance of
// the other side, which could only hide the change, leaves it called, as does one shorter
// than 1% of the window.
func TestDisturbedTailSide(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change string
		brief  []DisturbedRun
		out    []DisturbedRun
		want   string
	}{
		{"regressed, candidate briefly disturbed 8%", Regressed, []DisturbedRun{{Side: "candidate", Run: 0, Seconds: 1.1, Window: 13.5}}, nil, Inconclusive},
		{"regressed, base briefly disturbed", Regressed, []DisturbedRun{{Side: "base", Run: 0, Seconds: 1.1, Window: 13.5}}, nil, Regressed},
		{"improved, base briefly disturbed", Improved, []DisturbedRun{{Side: "base", Run: 1, Seconds: 1.1, Window: 13.5}}, nil, Inconclusive},
		{"regressed, candidate disturbed 0.5%", Regressed, []DisturbedRun{{Side: "candidate", Run: 0, Seconds: 0.06, Window: 13.5}}, nil, Regressed},
		{"regressed, base run left out", Regressed, nil, []DisturbedRun{{Side: "base", Run: 2, Seconds: 8, Window: 13.5}}, Regressed},
		{"regressed, candidate run left out", Regressed, nil, []DisturbedRun{{Side: "candidate", Run: 2, Seconds: 8, Window: 13.5}}, Inconclusive},
	} {
		r := &Result{Alpha: 0.05, Brief: tc.brief, Disturbed: tc.out, Rows: []Row{
			{Metric: ITLp50, Change: "~", P: 0.5},
			{Metric: ITLp99, Change: tc.change, P: 0.0005, Significant: true, Delta: 1.65, DeltaLo: 1.24, DeltaHi: 2.14},
		}}
		r.disturbedTails(nil, nil)
		if got := r.Rows[1].Change; got != tc.want {
			t.Errorf("%s: ITL p99 %s, want %s (notes %q)", tc.name, got, tc.want, r.Warnings)
		}
	}
}
