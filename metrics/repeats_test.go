package metrics

import (
	"strings"
	"testing"

	"servebench/record"
)

// repeatRun is a run whose E2E and TTFT medians are med ms with 95% intervals ±half ms, at
// rate req/s, with the client's load average load in its one health window.
func repeatRun(run int, med, half, rate, load float64) RunSummary {
	iv := Interval{Lo: (med - half) * 1e6, Hi: (med + half) * 1e6, OK: true}
	s := &Summary{E2E: Stat{N: 100, Median: med * 1e6}, E2EMedianCI: iv,
		TTFT: Stat{N: 100, Median: 50e6}, TTFTMedianCI: Interval{49e6, 51e6, true}, RequestThroughput: &rate,
		Ends: []record.RunEnd{{Run: run, Quality: &record.Quality{Windows: []record.HealthWindow{{Load1: load, HasProc: true}}}}}}
	return RunSummary{Run: run, Label: "", Summary: s}
}

// TestRepeatCheck: runs whose E2E medians are apart beyond both their intervals and 10%
// disagree, with the trend and the machine's load named; apart within their intervals, or by
// less than 10% however narrow the intervals, they agree.
func TestRepeatCheck(t *testing.T) {
	w := RepeatCheck([]RunSummary{repeatRun(0, 1050, 40, 12.3, 3.1), repeatRun(1, 810, 30, 19.6, 2.0), repeatRun(2, 612, 20, 24.7, 0.8)})
	if w == nil {
		t.Fatal("runs 1,050, 810, 612 ms with intervals ±20–40 ms agree")
	}
	for _, want := range []string{"the 3 runs disagree beyond their own noise: E2E p50 1,050, 810, 612 ms (run 1 is 72% above run 3",
		"request throughput 12.3, 19.6, 24.7 req/s", "each run was faster than the one before: the machine or the server was warming up", "load average (1 min) was 3.1, 2.0, 0.8 in runs 1–3"} {
		if !strings.Contains(w.Text, want) {
			t.Errorf("warning lacks %q:\n%s", want, w.Text)
		}
	}
	if w.Level != Distorts || strings.Contains(w.Text, "TTFT p50") {
		t.Errorf("level %v, TTFT (50 ms in every run) named: %s", w.Level, w.Text)
	}
	// the first two slow, the third fast, no trend: the slow runs named
	w = RepeatCheck([]RunSummary{repeatRun(0, 900, 20, 4, 0), repeatRun(1, 910, 20, 4, 0), repeatRun(2, 600, 20, 5, 0)})
	if w == nil || !strings.Contains(w.Text, "runs 1–2 (the first) were slower than the rest: the machine or the server was warming up") {
		t.Errorf("two slow first runs: %v", w)
	}
	// the slow run in the middle: no trend, that run named
	w = RepeatCheck([]RunSummary{repeatRun(0, 600, 20, 5, 0.5), repeatRun(1, 900, 20, 4, 2.5), repeatRun(2, 610, 20, 5, 0.5)})
	if w == nil || !strings.Contains(w.Text, "run 2 was slower than the rest, with no trend across the runs: something disturbed it") {
		t.Errorf("a slow middle run: %v", w)
	}
	for _, c := range []struct {
		name string
		runs []RunSummary
	}{
		{"within their intervals", []RunSummary{repeatRun(0, 1000, 150, 5, 0), repeatRun(1, 1200, 150, 5, 0)}},
		{"apart by 6.7%", []RunSummary{repeatRun(0, 600, 1, 5, 0), repeatRun(1, 640, 1, 5, 0)}},
		{"one run", []RunSummary{repeatRun(0, 600, 1, 5, 0)}},
	} {
		if w := RepeatCheck(c.runs); w != nil {
			t.Errorf("%s: %s", c.name, w.Text)
		}
	}
}

// TestFoldRuns: a note every run gave is said once with "(runs 1–3)"; one that differs in
// its figures and level between runs (and names its run) is said once at its worst level,
// quoted as that run gave it; one run's own note names its run.
func TestFoldRuns(t *testing.T) {
	runs := []RunSummary{repeatRun(0, 600, 1, 5, 0), repeatRun(1, 600, 1, 5, 0), repeatRun(2, 600, 1, 5, 0)}
	for i := range runs {
		runs[i].Label = []string{"repeat 1/3", "repeat 2/3", "repeat 3/3"}[i]
		runs[i].Summary.Warnings = []Warning{{Level: Info, Text: "simulated"}}
	}
	runs[0].Summary.Warnings = append(runs[0].Summary.Warnings, Warning{Level: Info, Text: "repeat 1/3: scheduling latency 2 ms at p99"})
	runs[1].Summary.Warnings = append(runs[1].Summary.Warnings, Warning{Level: Distorts, Text: "repeat 2/3: scheduling latency 14 ms at p99"},
		Warning{Level: Distorts, Text: "3 of 40 requests failed"})
	got := FoldRuns(runs)
	want := []Warning{
		{Level: Distorts, Text: "scheduling latency 14 ms at p99 (runs 1–2; run 2's figures)"},
		{Level: Distorts, Text: "3 of 40 requests failed (run 2)"},
		{Level: Info, Text: "simulated (runs 1–3)"},
	}
	if len(got) != len(want) {
		t.Fatalf("folded %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("note %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
}
