package metrics

import (
	"math/rand/v2"
	"strings"
	"testing"

	"servebench/record"
	"servebench/stat"
)

// synthetic makes n closed-loop records over 60 s whose TTFT is base·(1 + drift·t/60s) with
// ±20% noise, 16 tokens at 5 ms each; open-loop records instead pile up (in flight grows).
func synthetic(seed uint64, n int, drift float64, queue bool) *Accumulator {
	rng := rand.New(rand.NewPCG(seed, 1))
	a := NewAccumulator(Options{})
	h := &record.Header{Config: map[string]any{}}
	if queue {
		h.Config["rate"] = 10.0
	}
	a.SetHeader(h)
	span := int64(60e9)
	for i := range n {
		sent := 1 + span*int64(i)/int64(n)
		frac := float64(sent) / float64(span)
		ttft := int64(50e6 * (1 + drift*frac) * (0.8 + 0.4*rng.Float64()))
		if queue {
			ttft += int64(frac * 20e9) // each later request waits longer: the queue grows
		}
		r := &record.Record{ID: i, Phase: record.PhaseMeasure, Scheduled: sent, Dispatched: sent, Sent: sent, Headers: sent + 1e6,
			OutputTokens: 16, PromptTokens: 8}
		t := sent + ttft
		for range 16 {
			r.Events = append(r.Events, record.Event{T: t, N: 1})
			t += int64(5e6 * (0.8 + 0.4*rng.Float64()))
		}
		r.Done = t
		a.Add(r)
	}
	return a
}

func TestSteadyNoFalseAlarms(t *testing.T) {
	alarms := 0
	for seed := range uint64(20) {
		s := synthetic(seed, 400, 0, false).Summary()
		if !s.Steadiness.Tested || !s.Steadiness.Steady {
			alarms++
			t.Logf("seed %d: %+v", seed, s.Steadiness.Drifts)
		}
	}
	if alarms > 0 {
		t.Errorf("%d of 20 steady runs called drifting", alarms)
	}
}

func TestSteadyFindsDrift(t *testing.T) {
	s := synthetic(1, 400, 0.5, false).Summary()
	st := s.Steadiness
	if st.Steady || len(st.Drifts) == 0 || st.Drifts[0].Metric != "ttft" || st.Drifts[0].Direction != "rose" {
		t.Fatalf("TTFT rising 50%%: %+v", st)
	}
	if !strings.Contains(strings.Join(Texts(s.Warnings), "\n"), "not steady: TTFT p50 rose") {
		t.Errorf("warnings: %v", s.Warnings)
	}
	if st := synthetic(1, 400, -0.4, false).Summary().Steadiness; st.Steady || st.Drifts[0].Direction != "fell" {
		t.Errorf("TTFT falling: %+v", st)
	}
}

func TestSteadyFindsUnboundedQueueing(t *testing.T) {
	s := synthetic(2, 400, 0, true).Summary()
	if !s.Steadiness.Queueing || s.Steadiness.Queue == nil || s.Steadiness.Queue.ToN <= s.Steadiness.Queue.FromN ||
		!strings.Contains(strings.Join(Texts(s.Warnings), "\n"), "unbounded queueing: requests in flight or waiting grew") {
		t.Errorf("growing queue: %+v %v", s.Steadiness, s.Warnings)
	}
	if st := synthetic(2, 30, 0, false).Summary().Steadiness; st.Tested {
		t.Errorf("30 requests were tested: %+v", st)
	}
}

// trend's size and rate against hand-computed values: 1..10, one per minute, is a rise of
// 1 per minute; 1..5 has p = 0.0275 (stat's test), not below α = 0.01.
func TestTrendByHand(t *testing.T) {
	ts := []float64{0, 60e9, 120e9, 180e9, 240e9}
	if d, ok := trend(series{metric: "x", unit: "u", xs: []float64{1, 2, 3, 4, 5}, ts: ts}, 0.01, true); ok {
		t.Errorf("p = 0.0167 is not below α = 0.01 but drift was reported: %+v", d)
	}
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	ts = append(ts, 300e9, 360e9, 420e9, 480e9, 540e9)
	d, ok := trend(series{metric: "x", unit: "u", xs: xs, ts: ts}, 0.01, true)
	if !ok || d.PerMinute < 0.999 || d.PerMinute > 1.001 || d.P > 0.001 {
		t.Errorf("1..10, one per minute: %+v %v", d, ok)
	}
}

// A step must separate its sides in rank order: an excursion of three windows at the start
// that came back (a 70/30 mix's TTFT windows over HTTP, ms) is no step, though the step
// test alone gives p = 2e-14 for it; the same values with the last one still high are.
func TestTrendStepMustSeparate(t *testing.T) {
	ts := []float64{0, 1e9, 2e9, 3e9, 4e9, 5e9}
	came := []float64{19.56, 18.18, 66.54, 61.49, 66.51, 20.96}
	if sh := stat.ShiftTest(came); sh.P >= 0.001 || sh.Separation <= shiftMinSeparation {
		t.Fatalf("the excursion: shift test %+v, want p < 0.001 from the step test and sides that do not separate", sh)
	}
	if d, ok := trend(series{metric: "ttft", unit: "ms", xs: came, ts: ts}, 0.002, true); ok {
		t.Errorf("an excursion that came back called a drift: %+v", d)
	}
	stayed := []float64{19.56, 18.18, 20.96, 61.49, 66.51, 66.54}
	if d, ok := trend(series{metric: "ttft", unit: "ms", xs: stayed, ts: ts}, 0.002, true); !ok || d.Direction != "rose" {
		t.Errorf("a step that stayed: %+v %v, want TTFT rose", d, ok)
	}
}

// The ramp-in of a closed loop whose measured phase starts on a drained server (the warmup
// all ended before its first send) is counted from that send; while a warmup request is
// still in flight there, from the warmup's first send as before. And the per-request series
// end one window's least length (a closed loop's E2E p90) before the last send.
func TestRegionRampFromDrainedStart(t *testing.T) {
	var s steadyAcc
	// warmup: 0–1 s; the measured requests from 3 s, each 1 s long (one of 10 s: E2E p90)
	s.spans = append(s.spans, loadSpan{sent: 0, first: 1e8, end: 1e9})
	for i := range 40 {
		sent := int64(3e9 + int64(i)*5e8)
		e2e := int64(1e9)
		if i%10 == 9 {
			e2e = 10e9
		}
		s.spans = append(s.spans, loadSpan{sent: sent, first: sent + 1e8, end: sent + e2e})
		s.obs = append(s.obs, steadyObs{sent: sent, end: sent + e2e})
	}
	rg := s.region(false)
	if rg.first != 4e9 || rg.start != 4e9 {
		t.Errorf("drained start: region from %v (series from %v), want 4e9: the first measured send and one E2E", rg.start, rg.first)
	}
	in := s.inRegion(rg)
	if last := in[len(in)-1].sent; float64(last) > rg.lastAll-rg.minW || rg.minW <= rg.ramp {
		t.Errorf("last request in the series sent at %v, want at most %v (E2E p90 %v before the last send)", last, rg.lastAll-rg.minW, rg.minW)
	}
	s.spans[0].end = 3.5e9 // a warmup request still in flight at the first measured send
	if rg := s.region(false); rg.first != 3e9 {
		t.Errorf("start with the warmup in flight: region from %v, want 3e9 (the warmup's first send and one E2E is earlier)", rg.first)
	}
	if rg := s.region(true); rg.first != 3e9 {
		t.Errorf("open loop: region from %v, want 3e9 (an open loop is not held; idle at its first send is chance)", rg.first)
	}
}

// scheduledAhead counts, per window, the arrivals scheduled in the median E2E before each
// request's own scheduled time, any phase: by hand.
func TestScheduledAheadByHand(t *testing.T) {
	var s steadyAcc
	for _, at := range []int64{0, 1, 2, 3, 10, 11, 12, 13} { // seconds
		s.spans = append(s.spans, loadSpan{sched: at * 1e9, sent: at * 1e9})
	}
	for _, at := range []int64{2, 3, 12, 13} { // measured, E2E 2.5 s: the look-back
		s.obs = append(s.obs, steadyObs{sched: at * 1e9, sent: at*1e9 + 5e6, end: at*1e9 + 5e6 + 2.5e9})
	}
	e2e50 := s.region(true).e2e50
	if e2e50 != 2.5e9 {
		t.Fatalf("the region's median E2E %v, want 2.5e9", e2e50)
	}
	// in [t − 2.5 s, t): at 2 s, 0 and 1; at 3 s, 1 and 2; at 12 s, 10 and 11; at 13 s, 11 and 12
	got := s.scheduledAhead(s.obs, []int{0, 2, 4}, e2e50)
	if len(got) != 2 || got[0] != 2 || got[1] != 2 {
		t.Errorf("arrivals scheduled ahead: %v, want [2 2]", got)
	}
	s.spans = append(s.spans, loadSpan{sched: 11.5e9, sent: 11.5e9}) // one more in the second window's look-back
	if got := s.scheduledAhead(s.obs, []int{0, 2, 4}, e2e50); got[1] != 3 {
		t.Errorf("with an arrival at 11.5 s: %v, want the second window's mean 3", got)
	}
}
