package metrics

import (
	"math"
	"strings"
	"testing"
	"time"

	"servebench/record"
)

func TestParseShare(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"99%", 0.99, true}, {"0.99", 0.99, true}, {"1", 1, true}, {"100%", 1, true}, {"0", 0, true},
		{"1.5%", 0.015, true}, {"1.5", 0, false}, {"99", 0, false}, {"101%", 0, false}, {"-1%", 0, false},
		{"x", 0, false}, {"NaN", 0, false}, {"", 0, false},
	} {
		got, err := ParseShare("--fail-below", c.in)
		if (err == nil) != c.ok || (c.ok && math.Abs(got-c.want) > 1e-12) {
			t.Errorf("ParseShare(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestHeaderOptions(t *testing.T) {
	h := &record.Header{Config: map[string]any{"slo": []any{"ttft=500ms", "tpot=50ms"}, "duration": float64(10 * time.Second),
		"warmup_duration": float64(2 * time.Second), "cooldown_duration": float64(time.Second), "max_concurrency": float64(4)}}
	o, err := HeaderOptions(h)
	if err != nil || o.SLO.TTFT != 500*time.Millisecond || o.SLO.TPOT != 50*time.Millisecond || o.Window != 7*time.Second || o.MaxConcurrency != 4 {
		t.Fatalf("HeaderOptions = %+v, %v", o, err)
	}
	// an SLO that does not parse is an error, not dropped
	if _, err := HeaderOptions(&record.Header{Config: map[string]any{"slo": []any{"ttft=fast"}}}); err == nil {
		t.Fatal("a bad SLO in the header was accepted")
	}
}

func TestQuantileEmptyAndExact(t *testing.T) {
	if !math.IsNaN(Quantile(nil, 50)) {
		t.Fatal("Quantile of nothing is not NaN")
	}
	if q := Quantile([]float64{1, 2, 3, 4}, 50); q != 2.5 {
		t.Fatalf("p50 of 1..4 = %v, want 2.5", q)
	}
	if q := Quantile([]float64{1, 2, 3, 4}, 90); math.Abs(q-3.7) > 1e-12 {
		t.Fatalf("p90 of 1..4 = %v, want 3.7", q)
	}
}

func TestRunsGroupsByRun(t *testing.T) {
	h := &record.Header{Ends: []record.RunEnd{{Run: 1, Label: "second"}}}
	rs := NewRuns(h, Options{})
	rs.Add(&record.Record{Run: 1, ID: 0})
	rs.Add(&record.Record{Run: 0, ID: 1})
	got := rs.Summaries()
	if len(got) != 2 || got[0].Run != 0 || got[1].Run != 1 || got[1].Label != "second" {
		t.Fatalf("Summaries = %+v", got)
	}
	if empty := NewRuns(nil, Options{}).Summaries(); len(empty) != 1 || empty[0].Summary == nil {
		t.Fatalf("an empty file has no run: %+v", empty)
	}
}

// A server that reports 0 cached tokens has said so; one that reports nothing has not.
func TestCachedTokensReportedOrNot(t *testing.T) {
	rec := func(server map[string]float64) *record.Record {
		return &record.Record{Phase: record.PhaseMeasure, Sent: 1, Headers: 2, Done: 10, OutputTokens: 2, PromptTokens: 8,
			Events: []record.Event{{T: 5, N: 1}, {T: 9, N: 1}}, Server: server}
	}
	for _, c := range []struct {
		server   map[string]float64
		reported int
		cached   int64
	}{{nil, 0, 0}, {map[string]float64{"usage.cached_tokens": 0}, 1, 0}, {map[string]float64{"timings.cache_n": 6}, 1, 6}} {
		a := NewAccumulator(Options{})
		a.SetHeader(&record.Header{Target: record.Target{API: "openai-completions"}})
		a.Add(rec(c.server))
		s := a.Summary()
		if s.CachedReported != c.reported || s.CachedPromptTokens != c.cached {
			t.Errorf("server %v: reported %d cached %d, want %d %d", c.server, s.CachedReported, s.CachedPromptTokens, c.reported, c.cached)
		}
		noted := strings.Contains(strings.Join(Texts(s.Warnings), "\n"), "--enable-prompt-tokens-details")
		if noted != (c.reported == 0) {
			t.Errorf("server %v: note about turning reporting on = %v", c.server, noted)
		}
	}
}
