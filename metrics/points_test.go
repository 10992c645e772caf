package metrics

import (
	"testing"

	"servebench/record"
)

// TestGroupWarnings: a warning shared by several points is said once with its points; one
// that differs only in its figures, or in the run label it starts with, is the same warning.
func TestGroupWarnings(t *testing.T) {
	run := func(k int, label string, ws ...string) RunSummary {
		return RunSummary{Run: k, Label: label, Summary: &Summary{Warnings: note(ws...)}}
	}
	pts := []PointSummary{
		{Label: "a", Runs: []RunSummary{run(0, "a", "simulated", "a: scheduling latency 3.1 ms")}},
		{Label: "b", Runs: []RunSummary{run(1, "b", "simulated"), run(2, "b", "simulated", "12 of 40 failed")}},
		{Label: "c", Runs: []RunSummary{run(3, "c", "simulated", "c: scheduling latency 20 ms", "3 of 40 failed")}},
	}
	g := GroupWarnings(pts)
	if len(g) != 3 {
		t.Fatalf("%d groups, want 3: %+v", len(g), g)
	}
	want := []struct {
		text    string
		points  []int
		differs bool
	}{{"simulated", []int{0, 1, 2}, false}, {"scheduling latency 3.1 ms", []int{0, 2}, true}, {"12 of 40 failed", []int{1, 2}, true}}
	for i, w := range want {
		if g[i].Text != w.text || g[i].Differs != w.differs || len(g[i].Points) != len(w.points) {
			t.Errorf("group %d: %+v, want %+v", i, g[i], w)
			continue
		}
		for k := range w.points {
			if g[i].Points[k] != w.points[k] {
				t.Errorf("group %d points %v, want %v", i, g[i].Points, w.points)
			}
		}
	}
}

// TestPointsByLoad: without a sweep-end line, runs of one load are one point; with one, its
// points are the line's, in its order.
func TestPointsByLoad(t *testing.T) {
	a, b := 1.0, 0.5
	runs := []RunSummary{{Run: 0, Label: "concurrency 4, repeat 1/2", Summary: &Summary{SLOAttainment: &a}},
		{Run: 1, Label: "concurrency 4, repeat 2/2", Summary: &Summary{SLOAttainment: &b}},
		{Run: 2, Label: "concurrency 8, repeat 1/2", Summary: &Summary{}}}
	h := &record.Header{Ends: []record.RunEnd{{Run: 0, Concurrency: 4}, {Run: 1, Concurrency: 4}, {Run: 2, Concurrency: 8}}}
	p := Points(h, runs)
	if len(p) != 2 || p[0].Label != "concurrency 4" || len(p[0].Runs) != 2 || *p[0].Attainment() != 0.5 || p[1].Attainment() != nil {
		t.Errorf("points %+v", p)
	}
	h.SweepEnd = &record.SweepEnd{Points: []record.SweepPoint{{Label: "eight", Runs: []int{2}}, {Label: "four", Runs: []int{0, 1}}}}
	if p = Points(h, runs); len(p) != 2 || p[0].Label != "eight" || len(p[1].Runs) != 2 {
		t.Errorf("points from the sweep-end line %+v", p)
	}
}

// A warning whose level follows its figures ("info" at one point, "may distort" at the next)
// is one group at its worst level, with the worst point's words.
func TestGroupWarningsWorstLevel(t *testing.T) {
	run := func(k int, w Warning) RunSummary {
		return RunSummary{Run: k, Summary: &Summary{Warnings: []Warning{w}}}
	}
	pts := []PointSummary{
		{Label: "a", Runs: []RunSummary{run(0, Warning{Level: Info, Text: "delay 0.9 ms at p99"})}},
		{Label: "b", Runs: []RunSummary{run(1, Warning{Level: Distorts, Text: "delay 11.7 ms at p99", Action: "more CPU"})}},
		{Label: "c", Runs: []RunSummary{run(2, Warning{Level: Info, Text: "delay 1.2 ms at p99"})}},
	}
	g := GroupWarnings(pts)
	if len(g) != 1 || g[0].Level != Distorts || g[0].Text != "delay 11.7 ms at p99" || g[0].Action != "more CPU" ||
		g[0].Shown != 1 || !g[0].Milder || !g[0].Differs || len(g[0].Points) != 3 {
		t.Errorf("groups %+v, want one at may distort with point b's words", g)
	}
}
