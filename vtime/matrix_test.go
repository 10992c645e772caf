package vtime

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	matrixFlag = flag.String("matrix", "reduced", "validation matrix: reduced (CI) or full")
	shapeFlag  = flag.String("shape", "", "run only the cases whose shape contains this")
)

// TestMatrix runs the validation matrix and holds the steady-state check to its promises:
// at most 3% of steady-by-construction runs called not steady overall and 5% in any shape,
// at least 90% of changing runs caught naming the metric that changed; and --warmup auto to
// stopping within 3 windows after its minimum, in every steady shape but the open loop at
// 90% of capacity, whose load swings most from window to window: there the full matrix has
// 2 of its 12 settings at 5 and 11 windows, and the bound held is 12 (docs/metrics.md
// "Warmup"). The full matrix:
//
//	go test ./vtime -run TestMatrix -matrix=full -v
func TestMatrix(t *testing.T) {
	if raceEnabled {
		// the load runner and the engine model in their bubble run under the race detector
		// in TestClosedLoopRecords, and --warmup auto in package load's tests; this test
		// repeats those paths for its rates, at many times the time under the race detector
		t.Skip("run without the race detector (scripts/test's second pass): the same paths as TestClosedLoopRecords, many times the time under it")
	}
	full := *matrixFlag == "full"
	if testing.Short() && !full {
		t.Skip("the reduced matrix takes a few seconds")
	}
	start := time.Now()
	cs := Cases(t, full)
	if *shapeFlag != "" {
		cs = slices.DeleteFunc(cs, func(c Case) bool { return !strings.Contains(c.Shape, *shapeFlag) })
	}
	os := RunCases(t, cs)
	rs := Tally(os)
	t.Logf("%d runs in %v\n%s", len(os), time.Since(start), Table(rs))
	var sr, sf, cr, cn, auto, worst int
	for _, o := range os {
		if o.Err != nil {
			t.Errorf("%s (%s): %v", o.Shape, o.Label, o.Err)
		}
		if o.Load.WarmupAuto && !o.Changing {
			auto, worst = auto+1, max(worst, o.WarmupWindows)
			bound := 3
			if strings.Contains(o.Shape, "90% of capacity") {
				bound = 12
			}
			if o.WarmupStop != "converged" || o.WarmupWindows > bound {
				t.Errorf("%s (%s): warmup auto %s after %d windows, want converged within %d", o.Shape, o.Label, o.WarmupStop, o.WarmupWindows, bound)
			}
		}
		if testing.Verbose() && (o.Flagged != o.Changing || (o.Changing && !o.Named)) {
			t.Logf("miss: %s (%s): tested %v, drifts [%s]", o.Shape, o.Label, o.Tested, o.Drifts)
		}
	}
	t.Logf("warmup auto: %d steady runs, judge windows at most %d", auto, worst)
	for _, o := range os {
		if why, ok := knownFalseAlarms[o.Shape+": "+o.Label]; ok {
			if !o.Flagged {
				t.Errorf("%s (%s) is no longer a false alarm: take it out of knownFalseAlarms", o.Shape, o.Label)
			}
			t.Logf("known false alarm, not held to the shape's bound: %s (%s): %s", o.Shape, o.Label, why)
		}
	}
	for _, r := range rs {
		if r.Changing {
			cr, cn = cr+r.Runs, cn+r.Named
			continue
		}
		sr, sf = sr+r.Runs, sf+r.Flagged
		if pct(r.Flagged-known(os, r.Shape), r.Runs) > 5 {
			t.Errorf("%s: %d of %d steady runs called not steady", r.Shape, r.Flagged, r.Runs)
		}
	}
	if pct(sf, sr) > 3 {
		t.Errorf("%d of %d steady runs called not steady (> 3%%)", sf, sr)
	}
	if pct(cn, cr) < 90 {
		t.Errorf("%d of %d changing runs caught naming the metric (< 90%%)", cn, cr)
	}
}

// knownFalseAlarms are steady runs of the reduced matrix that the load runner's own start of
// the measured phase makes look unsteady, by shape and label, with why. Each is counted in
// the table and in the overall rate, but not against its shape's 5%, until it is fixed;
// the test fails when one stops being flagged, so the list cannot go stale.
// (steady closed 256 users, whose ramp's first 256 requests were 2.1× the rest, left the list
// with steady-2026.12.2: its first batch is not slow, so the transient rule no longer fires.)
var knownFalseAlarms = map[string]string{}

// known counts the outcomes of shape in knownFalseAlarms that were flagged.
func known(os []Outcome, shape string) int {
	n := 0
	for _, o := range os {
		if _, ok := knownFalseAlarms[o.Shape+": "+o.Label]; ok && o.Shape == shape && o.Flagged {
			n++
		}
	}
	return n
}
