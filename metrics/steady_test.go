package metrics

import (
	"math/rand/v2"
	"strings"
	"testing"

	"servebench/record"
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
