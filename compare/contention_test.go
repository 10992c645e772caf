package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/record"
)

// markContention counts, for each request, the other TTFT intervals that overlap its own,
// warmup ones included, touching ends not counted, capped at maxLevel (3 here; a comparison
// caps at contendedLevel).
func TestMarkContention(t *testing.T) {
	spans := []span{{0, 10}, {5, 15}, {10, 20}, {30, 40}, {31, 32}, {32, 33}, {33, 34}, {35, 36}}
	reqs := []obs{
		{sent: 0, ttft: 10},  // overlaps {5,15}
		{sent: 5, ttft: 10},  // overlaps {0,10} and {10,20}
		{sent: 10, ttft: 10}, // overlaps {5,15}; {0,10} only touches
		{sent: 30, ttft: 10}, // four others: capped at 3
		{sent: 50, ttft: math.NaN()},
	}
	markContention(reqs, spans, 3)
	for i, want := range []int{1, 2, 1, 3, -1} {
		if reqs[i].level != want {
			t.Errorf("request %d: level %d, want %d", i, reqs[i].level, want)
		}
	}
}

// contentionSide is runs of one server whose TTFT depends on contention alone: a lone
// arrival's is lone ms, one that arrives with a partner (both sent together) twice that. A
// run's share of paired arrivals is about pairs[run]; every run sends 200 requests, the next
// arrival 100 ms after a lone one's and, like a closed loop's user that waits for its answer,
// 200 ms + lone ms after a pair's, so the run's throughput falls as its share of pairs rises.
// Every request streams 4 tokens gap ms apart.
func contentionSide(rng *rand.Rand, lone float64, pairs []float64) *Side {
	return contentionSideGap(rng, lone, 5, pairs)
}

func contentionSideGap(rng *rand.Rand, lone, gap float64, pairs []float64) *Side {
	s := NewSide(&record.Header{Workload: record.Workload{Hash: "sha256:c"}}, metrics.Options{})
	for run, share := range pairs {
		base := int64(run) * 1e12
		id, at := 0, base+1
		for id < 200 {
			// a pair takes two slots, so every run sends 10 requests a second
			sent := at
			n := 1
			if rng.Float64() < share {
				n = 2
			}
			at += int64(n)*100e6 + int64(n-1)*int64(lone*1e6)
			for range n {
				ttft := lone * float64(n) * math.Exp(0.01*rng.NormFloat64()) * 1e6
				t := sent + int64(ttft)
				r := record.Record{Run: run, ID: id, Phase: record.PhaseMeasure, Scheduled: sent, Dispatched: sent, Sent: sent,
					FirstEvent: t, OutputTokens: 4, OutputTokensSource: record.SourceServer, PromptTokens: 64, PromptTokensSource: record.SourceServer}
				for k := range 4 {
					r.Events = append(r.Events, record.Event{T: t + int64(k)*int64(gap*float64(time.Millisecond)), N: 1})
				}
				r.Done = r.Events[3].T + 1e5
				s.Add(&r)
				id++
			}
		}
	}
	return s
}

// Identical servers whose runs met different shares of paired arrivals: TTFT p50 spreads with
// the share and is inconclusive on its own, but at equal contention it is the same, so it does
// not hold the verdict and the verdict line says it was decided at equal contention. A
// candidate whose lone arrivals are 20% slower regresses at equal contention and keeps the
// verdict from "no significant change".
func TestContentionClearsTTFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	base := contentionSide(rng, 20, []float64{0.1, 0.3, 0.2})
	same := contentionSide(rng, 20, []float64{0.6, 0.45, 0.15})
	res := Compare(base, same, Options{})
	row := findRow(t, res, TTFTp50.Name)
	if row.Contention == nil || row.Contention.Lone == nil {
		t.Fatalf("TTFT p50 has no figure at equal contention: %+v", row.Contention)
	}
	if row.Change != Inconclusive || !row.Contention.Clears(row) || res.Verdict != NoChange {
		t.Errorf("same server, other mixes: TTFT p50 %s (%+.1f%% [%+.1f%%, %+.1f%%]), at equal contention %s, verdict %s",
			row.Change, 100*row.Delta, 100*row.DeltaLo, 100*row.DeltaHi, row.Contention.Row.Change, res.Verdict)
	}
	if o := res.OpenTails(); !strings.Contains(o, "TTFT p50, E2E p50, output throughput, request throughput decided at equal contention") {
		t.Errorf("the verdict does not name TTFT p50 as decided at equal contention: %q", o)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "moved with the arrivals' clustering") {
		t.Errorf("no note says why TTFT p50 did not hold the verdict: %q", res.Warnings)
	}
	slower := contentionSide(rng, 24, []float64{0.2, 0.1, 0.3})
	res = Compare(base, slower, Options{})
	row = findRow(t, res, TTFTp50.Name)
	if row.Contention.Clears(row) || res.Verdict == NoChange {
		t.Errorf("lone arrivals 20%% slower: cleared %v, verdict %s", row.Contention.Clears(row), res.Verdict)
	}
}

// The same for the throughputs: identical servers whose runs met different shares of paired
// arrivals (each pair holds its users back) spread in throughput with the share, and are the
// same at equal contention (tokens per second of request time at each level), so the
// throughputs do not hold the verdict; a candidate whose gaps are 20% longer (its requests 12%
// longer) regresses there.
func TestContentionClearsThroughput(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	base := contentionSideGap(rng, 40, 20, []float64{0.1, 0.35, 0.2})
	same := contentionSideGap(rng, 40, 20, []float64{0.6, 0.45, 0.15})
	res := Compare(base, same, Options{})
	for _, m := range []Metric{OutputTPS, ReqPS} {
		row := findRow(t, res, m.Name)
		if row.Contention == nil {
			t.Fatalf("%s has no figure at equal contention", m.Name)
		}
		if row.Change != Inconclusive || !row.Contention.Clears(row) {
			t.Errorf("same server, other mixes: %s %s (%+.1f%% [%+.1f%%, %+.1f%%]), at equal contention %s %+.1f%% [%+.1f%%, %+.1f%%]",
				m.Name, row.Change, 100*row.Delta, 100*row.DeltaLo, 100*row.DeltaHi,
				row.Contention.Row.Change, 100*row.Contention.Row.Delta, 100*row.Contention.Row.DeltaLo, 100*row.Contention.Row.DeltaHi)
		}
	}
	if res.Verdict != NoChange {
		t.Errorf("same server, other mixes: verdict %s, want %s; warnings %q", res.Verdict, NoChange, res.Warnings)
	}
	if !strings.Contains(res.OpenTails(), "output throughput, request throughput decided at equal contention") {
		t.Errorf("the verdict does not name the throughputs as decided at equal contention: %q", res.OpenTails())
	}
	// a failed request has no contention level, so its time would vanish from the figure:
	// with one, the throughputs are not judged at equal contention
	failing := contentionSideGap(rng, 40, 20, []float64{0.6, 0.45, 0.15})
	failing.Add(&record.Record{Run: 1, ID: 999, Phase: record.PhaseMeasure, Scheduled: 1e12 + 5, Dispatched: 1e12 + 5,
		Sent: 1e12 + 5, Done: 1e12 + 5e9, ErrorClass: "http_503"})
	if row := findRow(t, Compare(base, failing, Options{}), OutputTPS.Name); row.Contention != nil {
		t.Errorf("a run with a failed request: output throughput judged at equal contention %s", row.Contention.Row.Change)
	}
	slower := contentionSideGap(rng, 40, 24, []float64{0.6, 0.45, 0.15})
	res = Compare(base, slower, Options{})
	row := findRow(t, res, OutputTPS.Name)
	if row.Contention == nil {
		t.Fatalf("gaps 20%% longer: output throughput has no figure at equal contention")
	}
	if eq := row.Contention.Row; eq.Change != Regressed || res.Verdict != Regressed {
		t.Errorf("gaps 20%% longer: output throughput %s, at equal contention %s %+.1f%% [%+.1f%%, %+.1f%%], verdict %s",
			row.Change, eq.Change, 100*eq.Delta, 100*eq.DeltaLo, 100*eq.DeltaHi, res.Verdict)
	}
}

func findRow(t *testing.T, r *Result, name string) Row {
	t.Helper()
	for _, row := range r.Rows {
		if row.Metric.Name == name {
			return row
		}
	}
	t.Fatalf("no row %s", name)
	return Row{}
}

// A run whose client was disturbed for a quarter of its window or more is left out, the most
// disturbed first, while two runs of the side remain; the others are kept and named as such.
func TestHealthyRuns(t *testing.T) {
	run := func(i int, disturbed float64) metrics.RunSummary {
		s := &metrics.Summary{Window: 10 * time.Second, Steadiness: &metrics.Steadiness{}}
		if disturbed > 0 {
			s.Steadiness.Disturbance = &metrics.Disturbance{Seconds: disturbed, Why: []string{"scheduling latency"}}
		}
		return metrics.RunSummary{Run: i, Summary: s}
	}
	kept, out := healthyRuns("base", []metrics.RunSummary{run(0, 0), run(1, 8), run(2, 1), run(3, 0)}, defaultKnobs)
	if len(kept) != 3 || len(out) != 1 || out[0].Run != 1 || out[0].Kept {
		t.Errorf("one run disturbed 80%%, one 10%%: kept %d, disturbed %+v", len(kept), out)
	}
	kept, out = healthyRuns("candidate", []metrics.RunSummary{run(0, 3), run(1, 9), run(2, 2.6)}, defaultKnobs)
	if len(kept) != 2 || len(out) != 3 || !out[0].Kept || out[1].Kept || !out[2].Kept || kept[0].Run != 0 {
		t.Errorf("three disturbed: kept %d, disturbed %+v; want run 2 out (the most), runs 1 and 3 kept", len(kept), out)
	}
	if kept, out = healthyRuns("base", []metrics.RunSummary{run(0, 9), run(1, 9)}, defaultKnobs); len(kept) != 2 || !out[0].Kept {
		t.Errorf("a side of two: kept %d, disturbed %+v", len(kept), out)
	}
}

// A plain change stands unless the mix of contention explains it: its figure at equal
// contention is equivalent over contended levels too, or does not show the change and lies
// wholly apart from it (the change at equal contention is demonstrably smaller).
func TestExplainsByTheMix(t *testing.T) {
	row := func(change string, d, lo, hi float64) Row {
		return Row{Change: change, Delta: d, DeltaLo: lo, DeltaHi: hi}
	}
	regressed := row(Regressed, 1.26, 0.18, 3.30)
	for _, tc := range []struct {
		name   string
		levels []int
		eq     Row
		want   string
	}{
		{"apart and inconclusive (the A/A pair over HTTP)", []int{0, 1}, row(Inconclusive, 0.038, 0.005, 0.072), Inconclusive},
		{"equivalent over two levels", []int{0, 1}, row("~", 0.01, -0.01, 0.03), Inconclusive},
		{"equivalent over the lone arrivals alone", []int{0}, row("~", 0.01, -0.01, 0.03), Inconclusive},
		{"overlapping and inconclusive", []int{0, 1}, row(Inconclusive, 0.12, 0.03, 0.21), Regressed},
		{"the same change", []int{0, 1}, row(Regressed, 0.9, 0.5, 1.3), Regressed},
	} {
		c := &Contention{Levels: tc.levels, Row: tc.eq}
		if got := c.Explains(regressed); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// the same change at equal contention, far smaller: it stands whatever the lone arrivals
	// show (the lone-arrivals rule, which made the first inconclusive, changed no verdict on
	// the recorded sets and was removed)
	plain := row(Regressed, 0.418, 0.400, 0.435)
	eq := row(Regressed, 0.066, 0.054, 0.078)
	for _, tc := range []struct {
		name string
		lone Row
		eq   Row
		want string
	}{
		{"lone arrivals unchanged, apart", row("~", 0.001, -0.005, 0.007), eq, Regressed},
		{"lone arrivals regressed too", row(Regressed, 0.3, 0.2, 0.4), eq, Regressed},
		{"lone arrivals unchanged, overlapping", row("~", 0.001, -0.005, 0.007), row(Regressed, 0.3, 0.1, 0.45), Regressed},
	} {
		lone := tc.lone
		c := &Contention{Levels: []int{0, 1}, Row: tc.eq, Lone: &lone}
		if got := c.Explains(plain); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// at one run a side the lone arrivals must show it too
	c := &Contention{Levels: []int{0, 1}, Row: row(Regressed, 0.9, 0.5, 1.3), Lone: &Row{Change: "~"}, OneEach: true}
	if got := c.Explains(regressed); got != Inconclusive {
		t.Errorf("one run a side, lone arrivals unchanged: %s, want %s", got, Inconclusive)
	}
}

// mixQuantile weights each level's requests to the level's weight: the percentile of the run
// as if its levels came in the common mix.
func TestMixQuantile(t *testing.T) {
	var lv [levelCap][]*obs
	for i := range 10 {
		lv[0] = append(lv[0], &obs{ttft: float64(1 + i)})
		lv[1] = append(lv[1], &obs{ttft: float64(100 + i)})
	}
	val := func(o *obs) float64 { return o.ttft }
	for _, tc := range []struct {
		w    []float64
		p    float64
		want float64
	}{
		{[]float64{0.5, 0.5}, 50, 10},
		{[]float64{0.5, 0.5}, 99, 109},
		{[]float64{0.9, 0.1}, 50, 6},
		{[]float64{0.9, 0.1}, 95, 104},
		{[]float64{1}, 99, 10},
	} {
		levels := []int{0, 1}[:len(tc.w)]
		if got := mixQuantile(lv, levels, tc.w, val, tc.p); got != tc.want {
			t.Errorf("weights %v, p%g: %g, want %g", tc.w, tc.p, got, tc.want)
		}
	}
}

// cohortSide is runs of one server in which, with probability share[run], an arrival brings
// k−1 others at the same instant, every one of the k waiting k·lone ms for its first token
// (one step prefills them all); lone arrivals take lone ms. 200 requests a run.
func cohortSide(rng *rand.Rand, lone float64, k int, share []float64) *Side {
	s := NewSide(&record.Header{Workload: record.Workload{Hash: "sha256:c"}}, metrics.Options{})
	for run, p := range share {
		id, at := 0, int64(run)*1e12+1
		for id < 200 {
			n := 1
			if rng.Float64() < p {
				n = k
			}
			sent := at
			at += int64(n)*100e6 + int64(n-1)*int64(lone*1e6)
			for range n {
				ttft := lone * float64(n) * math.Exp(0.01*rng.NormFloat64()) * 1e6
				t0 := sent + int64(ttft)
				r := record.Record{Run: run, ID: id, Phase: record.PhaseMeasure, Scheduled: sent, Dispatched: sent, Sent: sent,
					FirstEvent: t0, OutputTokens: 4, OutputTokensSource: record.SourceServer, PromptTokens: 64, PromptTokensSource: record.SourceServer}
				for j := range 4 {
					r.Events = append(r.Events, record.Event{T: t0 + int64(j)*int64(5*time.Millisecond), N: 1})
				}
				r.Done = r.Events[3].T + 1e5
				s.Add(&r)
				id++
			}
		}
	}
	return s
}

// Identical servers whose base runs fell into cohorts of four now and then (their TTFT p99 is a
// cohort's, four times a lone arrival's) and whose candidate runs never did: the plain TTFT p99
// fell by three quarters, but at equal contention it did not move, so TTFT p99 is not called
// improved; its interval excludes no change, so it holds the verdict at inconclusive. A
// candidate whose every prefill is 30% slower is called regressed at equal contention too.
func TestContentionExplainsTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	base := cohortSide(rng, 20, 4, []float64{0.06, 0.08, 0.07})
	same := cohortSide(rng, 20, 4, []float64{0, 0, 0})
	res := Compare(base, same, Options{})
	row := findRow(t, res, TTFTp99.Name)
	if row.Contention == nil {
		t.Fatalf("TTFT p99 has no figure at equal contention")
	}
	if plain := judge(row, row.Threshold); plain != Improved || row.Change != Inconclusive || res.Verdict != Inconclusive {
		t.Errorf("cohorts on one side only: TTFT p99 in its runs %s %+.1f%%, judged %s (at equal contention %s %+.1f%%), verdict %s",
			plain, 100*row.Delta, row.Change, row.Contention.Row.Change, 100*row.Contention.Row.Delta, res.Verdict)
	}
	slower := cohortSide(rng, 26, 4, []float64{0.06, 0.08, 0.07})
	res = Compare(base, slower, Options{})
	if row := findRow(t, res, TTFTp99.Name); row.Change != Regressed || res.Verdict != Regressed {
		t.Errorf("prefill 30%% slower: TTFT p99 %s %+.1f%%, verdict %s", row.Change, 100*row.Delta, res.Verdict)
	}
}
