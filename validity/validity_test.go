package validity

import (
	"strings"
	"testing"
	"time"

	"servebench/record"
)

// checker feeds n measured requests, scheduled 100 ms apart, with TTFT 50 ms except the
// first `over`, which take 3 s.
func checker(t *testing.T, rules Rules, n, over int) *record.Validity {
	t.Helper()
	c := Checker{Rules: rules}
	for i := range n {
		s := int64(i)*1e8 + 1
		ttft := int64(50e6)
		if i < over {
			ttft = 3e9
		}
		c.Add(&record.Record{ID: i, Phase: record.PhaseMeasure, Scheduled: s, Dispatched: s, Sent: s,
			FirstEvent: s + ttft, Events: []record.Event{{T: s + ttft, N: 1}, {T: s + ttft + 2e7, N: 1}},
			Done: s + ttft + 3e7, OutputTokens: 2, OutputTokensSource: record.SourceServer})
	}
	return c.Result()
}

// The acceptance: with a p99 TTFT rule, 0 of 300 over is INVALID needing 159 more
// requests; 0 of 500 is VALID.
func TestEarlyStoppingVerdict(t *testing.T) {
	rules, err := Build("", 0, 0, []string{"ttft=2s@p99"})
	if err != nil {
		t.Fatal(err)
	}
	v := checker(t, rules, 300, 0)
	if v.Verdict != record.Invalid || len(v.Checks) != 1 || v.Checks[0].Needed != 459 ||
		!strings.Contains(v.Checks[0].Shortfall, "p99 TTFT needs 159 more requests at this over-limit count") {
		t.Errorf("0 of 300: %+v", v)
	}
	if v := checker(t, rules, 500, 0); v.Verdict != record.Valid {
		t.Errorf("0 of 500: %+v", v)
	}
	// one over needs 662; a share over 1% cannot be saved by more requests
	if v := checker(t, rules, 600, 1); v.Verdict != record.Invalid || !strings.Contains(v.Checks[0].Shortfall, "needs 62 more") {
		t.Errorf("1 of 600: %+v", v)
	}
	if v := checker(t, rules, 500, 10); v.Verdict != record.Invalid || !strings.Contains(v.Checks[0].Shortfall, "reduce the load") {
		t.Errorf("10 of 500: %+v", v)
	}
}

// MLPerf's Server minimum duration is judged on the scheduled time of the last request.
func TestPresetDurationAndCount(t *testing.T) {
	rules, err := Build("mlperf-llama3.1-8b-server", 0, 1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := checker(t, rules, 600, 0) // 59.9 s of schedule
	if v.Verdict != record.Invalid || len(v.Checks) != 4 {
		t.Fatalf("%+v", v)
	}
	if c := v.Checks[0]; c.Pass || !strings.Contains(c.Figure, "59.9 s") || !strings.Contains(c.Shortfall, "run 541 s longer") {
		t.Errorf("duration: %+v", c)
	}
	if c := v.Checks[1]; c.Pass || c.Shortfall != "needs 400 more requests" {
		t.Errorf("count: %+v", c)
	}
	if c := v.Checks[2]; !c.Pass || !strings.Contains(c.Rule, "p99 TTFT ≤ 2s") || !strings.Contains(c.Figure, "nearest-rank p99 TTFT 50 ms") {
		t.Errorf("ttft: %+v", c)
	}
	if c := v.Checks[3]; !c.Pass || !strings.Contains(c.Rule, "p99 TPOT ≤ 100ms") {
		t.Errorf("tpot: %+v", c)
	}
	if _, err := Build("mlperf-nope", 0, 0, nil); err == nil {
		t.Error("an unknown preset is accepted")
	}
	for _, bad := range []string{"ttft=2s@p100", "ttft=2s@99x", "itl=2s@p99", "ttft=-1s@p99"} {
		if _, err := ParseLimits([]string{bad}); err == nil {
			t.Errorf("--slo %s accepted", bad)
		}
	}
	if r, _ := Build("", 0, 0, []string{"ttft=2s"}); r.Any() {
		t.Errorf("a goodput-only --slo made rules: %+v", r)
	}
	_ = time.Second
}

// The highest VALID load counts only points whose every lighter point was VALID too.
func TestHighestValid(t *testing.T) {
	v := func(rate float64, verdict string) record.RunEnd {
		return record.RunEnd{Rate: rate, Validity: &record.Validity{Verdict: verdict}}
	}
	got, ok := HighestValid([]record.RunEnd{v(4, record.Valid), v(1, record.Valid), v(8, record.Invalid), v(16, record.Valid)})
	if !ok || got.Rate != 4 {
		t.Errorf("got %+v %v, want rate 4", got, ok)
	}
	if _, ok := HighestValid([]record.RunEnd{v(1, record.Invalid)}); ok {
		t.Error("an invalid lightest point gave a highest valid load")
	}
}
