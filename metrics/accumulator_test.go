package metrics

import (
	"strings"
	"testing"
	"time"

	"servebench/record"
)

const ms = int64(time.Millisecond)

// ev builds events from (ms, tokens) pairs.
func ev(pairs ...float64) []record.Event {
	var out []record.Event
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, record.Event{T: int64(pairs[i] * float64(ms)), N: int32(pairs[i+1])})
	}
	return out
}

// roleChunkRecord: a chat request whose server sent a role-only chunk at 5 ms, then content
// events at 10 ms (1 token), 20 ms (1 token) and 50 ms (3 tokens).
func roleChunkRecord() *record.Record {
	return &record.Record{
		Phase: record.PhaseMeasure, Scheduled: ms / 5, Dispatched: ms / 2, Sent: 1 * ms,
		FirstEvent: 5 * ms, Events: ev(10, 1, 20, 1, 50, 3), Done: 51 * ms,
		OutputTokens: 5, OutputTokensSource: record.SourceServer,
		PromptTokens: 100, PromptTokensSource: record.SourceServer, InputTokens: 100,
	}
}

func checkStat(t *testing.T, name string, st Stat, n int, mean float64) {
	t.Helper()
	if st.N != n || !near(st.Mean, mean) {
		t.Errorf("%s: n=%d mean=%v, want n=%d mean=%v", name, st.N, st.Mean, n, mean)
	}
}

func TestPerRequestMetrics(t *testing.T) {
	var a Accumulator
	a.Add(roleChunkRecord())
	s := a.Summary()
	f := float64(ms)
	checkStat(t, "TTFT", s.TTFT, 1, 9*f)                         // 10 − 1
	checkStat(t, "TTFT (first event)", s.TTFTFirstEvent, 1, 4*f) // 5 − 1: the role chunk
	checkStat(t, "TTFT from dispatch", s.TTFTDispatch, 1, 9.5*f) // 10 − 0.5
	checkStat(t, "E2E", s.E2E, 1, 49*f)                          // 50 − 1
	checkStat(t, "stream", s.StreamTime, 1, 50*f)                // 51 − 1
	checkStat(t, "queue", s.Queue, 1, 0.3*f)                     // 0.5 − 0.2
	checkStat(t, "E2E incl. queue", s.E2EQueue, 1, 49.8*f)       // 50 − 0.2
	checkStat(t, "TPOT", s.TPOT, 1, 10*f)                        // (49 − 9)/(5 − 1)
	checkStat(t, "decode rate", s.DecodeRate, 1, 100)            // 4 tokens / 0.040 s
	checkStat(t, "client overhead", s.ClientOverhead, 1, 0.5*f)
	// ITL (chunk): gaps 10 and 30 ms. ITL (token): 10, then 30/3 three times.
	checkStat(t, "ITL (chunk)", s.ITLChunk, 2, 20*f)
	checkStat(t, "ITL (token)", s.ITLToken, 4, 10*f)
	if s.ITLToken.Min != 10*f || s.ITLToken.Max != 10*f {
		t.Errorf("ITL (token) = %+v, want four 10 ms values", s.ITLToken)
	}
	if s.Connect.Valid() {
		t.Error("connect time without a new connection")
	}
}

func TestITLTokenNeedsEveryCount(t *testing.T) {
	var a Accumulator
	r := roleChunkRecord()
	r.Events[1].N = 0 // one unknown count: no ITL (token) for this request
	a.Add(r)
	s := a.Summary()
	if s.ITLToken.Valid() || s.ITLTokenSkipped != 1 || s.ITLChunk.N != 2 {
		t.Errorf("ITL (token) n=%d skipped=%d chunk n=%d", s.ITLToken.N, s.ITLTokenSkipped, s.ITLChunk.N)
	}
	if !hasWarning(s, "ITL (token) is empty") {
		t.Errorf("warnings = %q", s.Warnings)
	}
}

func TestFailuresAndWarmupExcluded(t *testing.T) {
	var a Accumulator
	a.Add(roleChunkRecord())
	failed := roleChunkRecord()
	failed.Events = ev(2, 1, 500, 1) // would change every latency
	failed.ErrorClass, failed.Status = record.ErrHTTP5xx, 200
	a.Add(failed)
	warm := roleChunkRecord()
	warm.Phase = record.PhaseWarmup
	warm.Events = ev(3, 1)
	a.Add(warm)
	s := a.Summary()
	if s.Completed != 1 || s.Failed != 1 || s.Measured != 2 || s.WarmupDiscarded != 1 {
		t.Errorf("counts: %+v", s)
	}
	if s.Errors[record.ErrHTTP5xx] != 1 || s.FailureRate != 0.5 {
		t.Errorf("errors %v rate %v", s.Errors, s.FailureRate)
	}
	checkStat(t, "TTFT", s.TTFT, 1, 9*float64(ms))
	checkStat(t, "ITL (chunk)", s.ITLChunk, 2, 20*float64(ms))
	if s.OutputTokens != 5 || s.InputTokens != 100 {
		t.Errorf("tokens in=%d out=%d: failed requests are not in the totals", s.InputTokens, s.OutputTokens)
	}
	if !hasWarning(s, "1 of 2 requests failed (50.0%: http_5xx 1)") {
		t.Errorf("warnings = %q", s.Warnings)
	}
}

func hasWarning(s *Summary, sub string) bool {
	for _, w := range s.Warnings {
		if strings.Contains(w.String(), sub) {
			return true
		}
	}
	return false
}

// TestCancelledAreNotFailures checks that requests servebench cancelled at a stop are counted
// apart: not failures, not in the window, not in attainment.
func TestCancelledAreNotFailures(t *testing.T) {
	ok := record.Record{ID: 1, Phase: record.PhaseMeasure, Sent: 10, Done: 100, FirstEvent: 50,
		Events: []record.Event{{T: 50, N: 1}, {T: 90, N: 1}}, OutputTokens: 2, OutputTokensSource: record.SourceServer}
	cancelled := record.Record{ID: 2, Phase: record.PhaseMeasure, Sent: 20, Done: 5000, ErrorClass: record.ErrCancelled,
		Events: []record.Event{{T: 60, N: 1}}}
	a := NewAccumulator(Options{SLO: SLO{TTFT: time.Second}})
	a.Add(&ok)
	a.Add(&cancelled)
	s := a.Summary()
	if s.Cancelled != 1 || s.Failed != 0 || s.Measured != 1 || s.WindowEnd != 100 || s.MaxInFlight != 1 {
		t.Errorf("cancelled %d, failed %d, measured %d, window end %d, max in flight %d",
			s.Cancelled, s.Failed, s.Measured, s.WindowEnd, s.MaxInFlight)
	}
	if s.SLOAttainment == nil || *s.SLOAttainment != 1 {
		t.Errorf("attainment %v, want 1", s.SLOAttainment)
	}
}

// TestPrefixCacheWarning checks the warning when the server reports prompt tokens served from
// its prefix cache (llama.cpp timings.cache_n), and its silence for a BOS token's worth.
func TestPrefixCacheWarning(t *testing.T) {
	summary := func(cached float64) *Summary {
		r := record.Record{ID: 1, Phase: record.PhaseMeasure, Sent: 10, Done: 100, FirstEvent: 50,
			Events: []record.Event{{T: 50, N: 1}}, OutputTokens: 1, OutputTokensSource: record.SourceServer,
			PromptTokens: 65, PromptTokensSource: record.SourceServer, Server: map[string]float64{"timings.cache_n": cached}}
		var a Accumulator
		a.Add(&r)
		return a.Summary()
	}
	warned := func(s *Summary) bool {
		for _, w := range s.Warnings {
			if strings.Contains(w.String(), "prefix cache") {
				return true
			}
		}
		return false
	}
	if s := summary(64); s.CachedPromptTokens != 64 || !warned(s) {
		t.Errorf("64 of 65 cached: %d, warned %v", s.CachedPromptTokens, warned(s))
	}
	if s := summary(1); warned(s) {
		t.Error("one cached token (BOS) warned")
	}
}

// TestCachedBeyondOpening: a request's opening (the tokens the server adds to its text, at
// least 1, and 8 more) is left out of the cached tokens the cache note judges; a chat
// template's worth is no warning, a prompt cached whole still is.
func TestCachedBeyondOpening(t *testing.T) {
	summary := func(asked, prompt int, cached float64) *Summary {
		r := record.Record{ID: 1, Phase: record.PhaseMeasure, Sent: 10, Done: 100, FirstEvent: 50,
			Events: []record.Event{{T: 50, N: 1}}, OutputTokens: 1, OutputTokensSource: record.SourceServer,
			InputTokens: asked, PromptTokens: prompt, PromptTokensSource: record.SourceServer, Server: map[string]float64{"timings.cache_n": cached}}
		var a Accumulator
		a.Add(&r)
		return a.Summary()
	}
	invalid := func(s *Summary) bool { return len(s.Invalid()) > 0 }
	for _, c := range []struct {
		asked, prompt int
		cached        float64
		beyond        int64
		invalid       bool
	}{
		{64, 65, 9, 0, false},    // BOS and a shared first phrase
		{64, 76, 20, 0, false},   // a 12-token chat template and 8 more
		{64, 76, 40, 20, true},   // 20 tokens past the opening: 26% of the prompt
		{64, 65, 64, 55, true},   // the whole prompt: a replay
		{0, 65, 9, 0, false},     // no length asked: an opening of 1 + 8
		{256, 257, 12, 3, false}, // 3 tokens past it: 1.2%, under the 5% threshold
	} {
		s := summary(c.asked, c.prompt, c.cached)
		if s.CachedBeyondOpening != c.beyond || invalid(s) != c.invalid {
			t.Errorf("asked %d, prompt %d, cached %v: %d beyond the opening, INVALID %v; want %d, %v",
				c.asked, c.prompt, c.cached, s.CachedBeyondOpening, invalid(s), c.beyond, c.invalid)
		}
	}
}
