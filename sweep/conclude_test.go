package sweep

import (
	"strings"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// points are sweep points by load with the given attainments (nil: no SLO figure).
func points(att ...float64) []record.SweepPoint {
	out := make([]record.SweepPoint, len(att))
	for i, a := range att {
		tp, g := float64(i+1), a*float64(i+1)
		out[i] = record.SweepPoint{Label: "p", Runs: []int{i}, Offered: tp, RequestThroughput: &tp, RequestGoodput: &g, SLOAttainment: &att[i]}
	}
	return out
}

// TestSLOLoadNeedsEveryLighterPoint is a sweep whose attainment is not monotonic: 100% at the two
// lightest loads, then 20%, 0%, 100%, 0%. The SLO load is the second point, not the 100%
// above the misses, and the sweep says attainment was not monotonic.
func TestSLOLoadNeedsEveryLighterPoint(t *testing.T) {
	e := &record.SweepEnd{Points: points(1, 1, 0.2, 0, 1, 0), TargetAttainment: 0.99}
	findSLOLoad(e)
	if e.SLOLoad == nil || e.SLOLoad.Runs[0] != 1 {
		t.Errorf("SLO load %+v, want run 1", e.SLOLoad)
	}
	if e.FirstMiss == nil || e.FirstMiss.Runs[0] != 2 || len(e.MetAbove) != 1 || e.MetAbove[0].Runs[0] != 4 {
		t.Errorf("first miss %+v, met above %+v: want run 2, and run 4 named", e.FirstMiss, e.MetAbove)
	}
	// monotonic: nothing met above the first miss
	e = &record.SweepEnd{Points: points(1, 1, 0.5, 0), TargetAttainment: 0.99}
	findSLOLoad(e)
	if e.SLOLoad.Runs[0] != 1 || e.FirstMiss.Runs[0] != 2 || len(e.MetAbove) != 0 {
		t.Errorf("monotonic sweep: %+v", e)
	}
	// the lightest missed: no load is shown to meet the SLOs, whatever met above it
	e = &record.SweepEnd{Points: points(0.5, 1), TargetAttainment: 0.99}
	findSLOLoad(e)
	if e.SLOLoad != nil || len(e.MetAbove) != 1 {
		t.Errorf("lightest missed: %+v", e)
	}
}

func TestKneeAndMaxGoodput(t *testing.T) {
	e := &record.SweepEnd{Points: points(1, 1, 1, 0.5)} // throughput 1..4, goodput 1, 2, 3, 2
	findKnee(e)
	findMaxGoodput(e)
	if *e.PeakThroughput != 4 || e.Knee.Runs[0] != 3 || e.MaxGoodput.Runs[0] != 2 {
		t.Errorf("peak %v, knee %+v, max goodput %+v", *e.PeakThroughput, e.Knee, e.MaxGoodput)
	}
}

// TestSearchBracketStopsAtTheFirstMiss: the search bisects between the highest load whose
// every lighter point met the target and the first that missed, not past a miss.
func TestSearchBracketStopsAtTheFirstMiss(t *testing.T) {
	sw := &sweeper{c: &Config{Auto: true}}
	for i, a := range []float64{1, 0.2, 1, 0} {
		s := &metrics.Summary{SLOAttainment: &a}
		sw.pts = append(sw.pts, &pointRun{pt: point{rate: float64(i + 1)}, ps: metrics.PointSummary{Runs: []metrics.RunSummary{{Run: i, Summary: s}}}})
	}
	if pass, fail, ok := sw.bracket(0.99); pass != 1 || fail != 2 || !ok {
		t.Errorf("bracket %v..%v (%v), want 1..2", pass, fail, ok)
	}
}

// TestPoorPointIsNoConclusion: a point whose window was mostly ramp-in and drain is listed
// with its note, but neither the peak, the knee, the max goodput nor the SLO load rests on it,
// and the search's bracket passes over it.
func TestPoorPointIsNoConclusion(t *testing.T) {
	e := &record.SweepEnd{Points: points(1, 1, 1, 1), TargetAttainment: 0.99} // throughput 1..4
	e.Points[3].Poor = "poor: mostly ramp-in and drain"
	findKnee(e)
	findMaxGoodput(e)
	findSLOLoad(e)
	if *e.PeakThroughput != 3 || e.Knee.Runs[0] != 2 || e.MaxGoodput.Runs[0] != 2 || e.SLOLoad.Runs[0] != 2 {
		t.Errorf("peak %v, knee %+v, max goodput %+v, SLO load %+v: want all at run 2, the poor run 3 passed over",
			*e.PeakThroughput, e.Knee, e.MaxGoodput, e.SLOLoad)
	}
	sw := &sweeper{c: &Config{Auto: true}}
	for i, c := range []struct{ att, overlap float64 }{{1, 0}, {0, 0.46}, {1, 0.1}, {0, 0}} {
		s := &metrics.Summary{SLOAttainment: &c.att, WarmupOverlap: &c.overlap, RequestThroughput: ptrTo(float64(i + 1))}
		sw.pts = append(sw.pts, &pointRun{pt: point{users: i + 1}, ps: metrics.PointSummary{Concurrency: i + 1, Runs: []metrics.RunSummary{{Run: i, Summary: s}}}})
	}
	if pass, fail, ok := sw.bracket(0.99); pass != 3 || fail != 4 || !ok {
		t.Errorf("bracket %v..%v (%v), want 3..4: the poor second point is no miss", pass, fail, ok)
	}
	if sw.pts[1].ps.Poor() == "" || sw.pts[2].ps.Poor() != "" {
		t.Errorf("poor: %q, %q", sw.pts[1].ps.Poor(), sw.pts[2].ps.Poor())
	}
}

func ptrTo(v float64) *float64 { return &v }

// TestUnorderedAutoSweepIsInvalid: an --auto sweep whose maximum-throughput point completed
// fewer requests per second than its synchronous point (a busy machine between them) cannot
// be ordered by load: it is INVALID with the reason and its knee is withheld; within
// orderShare (a one-slot server, noise) it stands.
func TestUnorderedAutoSweepIsInvalid(t *testing.T) {
	sweepOf := func(sync, peak float64) *sweeper {
		sw := &sweeper{c: &Config{Auto: true}}
		for i, p := range []struct {
			pt point
			tp float64
		}{{point{users: 1, kind: "synchronous"}, sync}, {point{users: 40, kind: "throughput"}, peak}} {
			s := &metrics.Summary{RequestThroughput: ptrTo(p.tp)}
			sw.pts = append(sw.pts, &pointRun{pt: p.pt, ps: metrics.PointSummary{Label: p.pt.label(), Concurrency: p.pt.users, Runs: []metrics.RunSummary{{Run: i, Summary: s}}}})
		}
		return sw
	}
	e := sweepOf(19.6, 12.3).concludeSLO(false, metrics.SLO{})
	if e.Unordered == "" || e.Withheld == "" || e.Knee != nil || e.PeakThroughput != nil {
		t.Fatalf("max 12.3 below synchronous 19.6: unordered %q, withheld %q, knee %+v", e.Unordered, e.Withheld, e.Knee)
	}
	for _, want := range []string{"cannot be ordered", "12.3 req/s", "19.6 req/s", "37% below"} {
		if !strings.Contains(e.Withheld, want) {
			t.Errorf("withheld %q lacks %q", e.Withheld, want)
		}
	}
	for _, c := range []struct{ sync, peak float64 }{{10, 9.5}, {10, 40}} {
		if e := sweepOf(c.sync, c.peak).concludeSLO(false, metrics.SLO{}); e.Unordered != "" || e.Withheld != "" || e.Knee == nil {
			t.Errorf("synchronous %v, max %v: unordered %q, withheld %q, knee %+v; want it to stand", c.sync, c.peak, e.Unordered, e.Withheld, e.Knee)
		}
	}
	// a list sweep has no synchronous point to order against: fewer req/s at more users is overload
	sw := sweepOf(19.6, 12.3)
	for _, p := range sw.pts {
		p.pt.kind = ""
	}
	sw.c.Auto = false
	if e := sw.concludeSLO(false, metrics.SLO{}); e.Unordered != "" {
		t.Errorf("list sweep called unordered: %q", e.Unordered)
	}
}
