package metrics

import (
	"compress/gzip"
	"math"
	"os"
	"strings"
	"testing"

	"servebench/record"
)

// readRecords reads a gzipped records file of a real run.
func readRecords(t *testing.T, path string) (*record.Header, []record.Record) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	h, recs, err := record.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return h, recs
}

func summarise(h *record.Header, recs []record.Record) *Summary {
	a := NewAccumulator(Options{})
	a.SetHeader(h)
	for i := range recs {
		a.Add(&recs[i])
	}
	return a.Summary()
}

// The records of a real run over HTTP (`servebench sim`, `run --concurrency 16 --output-tokens
// 32 --requests 400` at load 23): 2.8 s into the window the 16 users merged into one cohort,
// each request's TTFT overlapping 15 others' instead of 1.5, and TTFT p50 rose from 29 to
// about 225 ms while the simulator was the same. The check must find the raw drift, name it as
// the phase, and call the run steady.
func TestSteadyJudgesPhaseAtEqualContention(t *testing.T) {
	h, recs := readRecords(t, "testdata/closed-16-phase-merge.jsonl.gz")
	s := summarise(h, recs)
	st := s.Steadiness
	c := st.Contention
	if !st.Tested || !st.Steady || c == nil || !c.Moved || len(c.Explained) != 1 || c.Explained[0].Metric != "ttft" {
		t.Fatalf("phase merge: %+v, contention %+v", st, c)
	}
	if c.To < 4*c.From || c.TTFTAtEqual == nil || math.Abs(*c.TTFTAtEqual) >= steadyMinChange {
		t.Errorf("contention %+v (at equal %v): want the level to rise several-fold and TTFT flat at equal contention", c, c.TTFTAtEqual)
	}
	explained := false
	for _, sc := range st.Series {
		if sc.Metric == "ttft" {
			explained = sc.Tested && strings.Contains(sc.Explained, "with contention")
		}
	}
	ws := strings.Join(Texts(s.Warnings), "\n")
	if !explained || !strings.Contains(ws, "with contention, not with the server: the users' phase merged") {
		t.Errorf("series %+v; warnings:\n%s", st.Series, ws)
	}
}

// The same records with the server slowed ×1.5 from the middle of the window on: every instant
// after it is 1.5 times as far from it (the closed loop's sends follow the slower completions,
// as they would). The users are one cohort by then, so the throttle comes on top of the phase
// merge: the check must still call the run not steady, naming TTFT.
func TestSteadyContentionKeepsThrottle(t *testing.T) {
	h, recs := readRecords(t, "testdata/closed-16-phase-merge.jsonl.gz")
	var first, last int64 = math.MaxInt64, 0
	for _, r := range recs {
		if r.Phase == record.PhaseMeasure && r.Sent > 0 {
			first, last = min(first, r.Sent), max(last, r.Sent)
		}
	}
	mid := (first + last) / 2
	stretch := func(t *int64) {
		if *t > mid {
			*t = mid + (*t-mid)*3/2
		}
	}
	for i := range recs {
		r := &recs[i]
		for _, p := range []*int64{&r.Scheduled, &r.Dispatched, &r.Sent, &r.Headers, &r.FirstEvent, &r.Done} {
			stretch(p)
		}
		for j := range r.Events {
			stretch(&r.Events[j].T)
		}
	}
	st := summarise(h, recs).Steadiness
	named := false
	for _, d := range st.Drifts {
		named = named || d.Metric == "ttft"
	}
	if st.Steady || !named {
		t.Fatalf("throttled ×1.5 from the middle: %+v, contention %+v; want TTFT named", st, st.Contention)
	}
}

// contentionWork by hand: three requests' TTFT intervals [0, 10), [5, 15), [20, 30) with
// prompts 100, 200, 300 (ns), and events of another request at 6, 7 and 25.
func TestContentionWorkByHand(t *testing.T) {
	s := steadyAcc{spans: []loadSpan{
		{sent: 1, first: 10, end: 40, prompt: 100},
		{sent: 5, first: 15, end: 40, prompt: 200},
		{sent: 20, first: 30, end: 40, prompt: 300},
	}, events: []int64{25, 6, 7}}
	in := []steadyObs{{sent: 1, first: 10}, {sent: 5, first: 15}, {sent: 20, first: 30}, {sent: 50}}
	lv, work := s.contentionWork(in)
	// request 0 overlaps request 1 over [5, 10): half of request 1's interval
	want := [][2]float64{{100 + 200*5.0/10, 2}, {200 + 100*5.0/9, 2}, {300, 1}, {0, 0}}
	wantLv := []int{1, 1, 0, -1}
	for i := range in {
		if lv[i] != wantLv[i] || math.Abs(work[i][0]-want[i][0]) > 1e-9 || work[i][1] != want[i][1] {
			t.Errorf("request %d: level %d work %v, want %d %v", i, lv[i], work[i], wantLv[i], want[i])
		}
	}
}

// withinFit recovers the coefficients of TTFT = 5 + 0.02·prefill + 0.5·decode exactly, and the
// series at equal contention of windows whose only difference is their work is flat, whatever
// the windows' levels.
func TestWithinFitByHand(t *testing.T) {
	var win [][]condObs
	for w := range 6 {
		var ws []condObs
		for i := range 8 {
			p, d := float64(500*(1+i%3)+1000*w), float64((i*7)%5+3*w)
			ws = append(ws, condObs{work: [2]float64{p, d}, v: 5 + 0.02*p + 0.5*d})
		}
		win = append(win, ws)
	}
	c, ok := withinFit(win, trimMADs)
	if !ok || math.Abs(c[0]-0.02) > 1e-9 || math.Abs(c[1]-0.5) > 1e-9 {
		t.Fatalf("coefficients %v %v, want [0.02 0.5]", c, ok)
	}
	eq := atEqual(win, c)
	for i := range eq {
		if math.Abs(eq[i]-eq[0]) > 1e-9 {
			t.Errorf("series at equal contention %v is not flat", eq)
			break
		}
	}
}
