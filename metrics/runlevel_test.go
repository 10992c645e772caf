package metrics

import (
	"strings"
	"testing"
	"time"

	"servebench/record"
)

const sec = int64(time.Second)

// span builds a completed request sent at s and done at d seconds, one event at each of at
// (seconds) with the given token counts.
func span(s, d float64, at []float64, n []int32) *record.Record {
	r := &record.Record{Phase: record.PhaseMeasure, Scheduled: int64(s * float64(sec)),
		Dispatched: int64(s * float64(sec)), Sent: int64(s * float64(sec)), Done: int64(d * float64(sec))}
	out := 0
	for i, t := range at {
		r.Events = append(r.Events, record.Event{T: int64(t * float64(sec)), N: n[i]})
		out += max(int(n[i]), 1)
	}
	r.OutputTokens, r.OutputTokensSource = out, record.SourceServer
	return r
}

func TestPeakBucketsAlignedToWindowStart(t *testing.T) {
	var a Accumulator
	// Window starts at 1.5 s. Aligned to it, [1.5, 2.5) holds 5+5 = 10 tokens; buckets
	// aligned to whole seconds would give at most 6.
	a.Add(span(1.5, 2.7, []float64{1.6, 2.4, 2.6}, []int32{5, 5, 1}))
	a.Add(span(2.0, 3.0, []float64{2.6}, []int32{2}))
	s := a.Summary()
	if s.PeakOutputTokensPerS == nil || *s.PeakOutputTokensPerS != 10 || s.PeakUnknownEvents != 0 {
		t.Fatalf("peak = %v (unknown %d), want 10", s.PeakOutputTokensPerS, s.PeakUnknownEvents)
	}
}

func TestPeakCountsEventsWhenTokensUnknown(t *testing.T) {
	var a Accumulator
	r := span(1.5, 2.7, []float64{1.6, 2.4, 2.6}, []int32{0, 0, 0})
	r.OutputTokens = 4 // the server's count is not one per event: the counts stay unknown
	a.Add(r)
	s := a.Summary()
	if *s.PeakOutputTokensPerS != 2 || s.PeakUnknownEvents != 3 {
		t.Fatalf("peak = %d (unknown %d), want 2 (3)", *s.PeakOutputTokensPerS, s.PeakUnknownEvents)
	}
	if !hasWarning(s, "one token per event for 3 events") {
		t.Errorf("warnings = %q", s.Warnings)
	}
}

func TestConcurrencyWindowAndRates(t *testing.T) {
	var a Accumulator
	// A[1,5] B[2,3] C[3,6] D[5,7] E[2.5,4]: at 3 s B ends as C starts, so at most A, E, C
	// are in flight together: 3. Σ spans = 4+1+3+2+1.5 = 11.5 s over a 6 s window.
	for _, sd := range [][2]float64{{1, 5}, {2, 3}, {3, 6}, {5, 7}, {2.5, 4}} {
		a.Add(span(sd[0], sd[1], []float64{sd[1]}, []int32{10}))
	}
	s := a.Summary()
	if s.Window != 6*time.Second || s.WindowStart != 1*sec || s.WindowEnd != 7*sec {
		t.Errorf("window %v [%d, %d]", s.Window, s.WindowStart, s.WindowEnd)
	}
	if s.MaxInFlight != 3 {
		t.Errorf("max in flight = %d, want 3", s.MaxInFlight)
	}
	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"mean concurrency", s.MeanConcurrency, 11.5 / 6},
		{"achieved rate", s.AchievedRate, 5.0 / 4}, // 5 requests, sent from 1 s to 5 s
		{"request throughput", s.RequestThroughput, 5.0 / 6},
		{"output throughput", s.OutputThroughput, 50.0 / 6},
		{"total throughput", s.TotalTokenThroughput, 50.0 / 6},
	}
	for _, c := range checks {
		if c.got == nil || !near(*c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if s.RequestGoodput != nil {
		t.Error("goodput without SLOs must be nil")
	}
}

func TestGoodputInclusive(t *testing.T) {
	a := NewAccumulator(Options{SLO: SLO{TTFT: 10 * time.Millisecond, TPOT: 5 * time.Millisecond}})
	mk := func(ttftNS, gapNS int64) *record.Record {
		r := &record.Record{Phase: record.PhaseMeasure, Dispatched: sec, Sent: sec,
			OutputTokens: 3, OutputTokensSource: record.SourceServer}
		first := sec + ttftNS
		r.Events = []record.Event{{T: first, N: 1}, {T: first + gapNS, N: 1}, {T: first + 2*gapNS, N: 1}}
		r.Done = first + 2*gapNS
		return r
	}
	a.Add(mk(10*ms, 5*ms))   // exactly at both thresholds: meets
	a.Add(mk(10*ms+1, 5*ms)) // TTFT 1 ns over
	a.Add(mk(1*ms, 5*ms+1))  // TPOT 1 ns over
	one := mk(1*ms, 0)       // one token: no TPOT, meets vacuously
	one.Events, one.OutputTokens = one.Events[:1], 1
	a.Add(one)
	s := a.Summary()
	if s.GoodRequests != 2 {
		t.Fatalf("good = %d, want 2", s.GoodRequests)
	}
	want := 2 / (float64(s.Window) / 1e9)
	if s.RequestGoodput == nil || !near(*s.RequestGoodput, want) {
		t.Errorf("goodput = %v, want %v", s.RequestGoodput, want)
	}
}

func TestGoodputITLAndE2E(t *testing.T) {
	a := NewAccumulator(Options{SLO: SLO{ITL: 20 * time.Millisecond, E2E: 100 * time.Millisecond}})
	a.Add(roleChunkRecord()) // gaps 10, 30 ms: the 30 ms gap breaks the ITL objective
	r := roleChunkRecord()
	r.Events = ev(10, 1, 30, 1, 50, 3) // gaps 20, 20: meets; E2E 49 ms meets
	a.Add(r)
	r = roleChunkRecord()
	r.Events = nil // completed without content: no E2E, cannot meet an E2E objective
	a.Add(r)
	if g := a.Summary().GoodRequests; g != 1 {
		t.Errorf("good = %d, want 1", g)
	}
}

func TestShortOutputsAndSources(t *testing.T) {
	var a Accumulator
	r := roleChunkRecord()
	r.FixedOutput, r.MaxTokens = true, 8 // got 5
	a.Add(r)
	r = roleChunkRecord()
	r.OutputTokens, r.OutputTokensSource = 0, "" // no usage: fall back to the events
	r.Events[0].N = 0
	r.PromptTokens, r.PromptTokensSource = 0, "" // no prompt usage: the requested length
	r.InputTokens = 120
	a.Add(r)
	r = roleChunkRecord()
	r.PromptTokens = 104 // server counted the chat template: a mismatch of +4
	a.Add(r)
	s := a.Summary()
	if s.ShortOutputs != 1 {
		t.Errorf("short = %d", s.ShortOutputs)
	}
	if s.OutputTokenSources[record.SourceCount] != 1 || s.OutputTokenSources[record.SourceServer] != 2 {
		t.Errorf("output sources %v", s.OutputTokenSources)
	}
	if s.PromptTokenSources[record.SourceRequested] != 1 || s.InputTokens != 100+120+104 {
		t.Errorf("prompt sources %v input %d", s.PromptTokenSources, s.InputTokens)
	}
	if s.OutputTokens != 5+3+5 { // 3 events counted one each
		t.Errorf("output tokens %d", s.OutputTokens)
	}
	if s.PromptMismatches != 1 || s.PromptDelta.Max != 4 || s.PromptTokens.N != 2 {
		t.Errorf("prompt mismatch %d delta %+v", s.PromptMismatches, s.PromptDelta)
	}
	for _, w := range []string{"1 fixed-length requests", "output token counts for 1 requests are estimates",
		"input token counts for 1 requests", "differ from the requested length for 1 requests (mean +2.0"} {
		if !hasWarning(s, w) {
			t.Errorf("no warning %q in %q", w, s.Warnings)
		}
	}
}

func TestEmptyAndRepeatSummary(t *testing.T) {
	var a Accumulator
	s := a.Summary()
	if s.RequestThroughput != nil || s.PeakOutputTokensPerS != nil || s.TTFT.Valid() || s.Window != 0 {
		t.Errorf("empty summary has figures: %+v", s)
	}
	a.Add(roleChunkRecord())
	a.Add(roleChunkRecord())
	s1, s2 := a.Summary(), a.Summary()
	if s1.TTFT.Mean != s2.TTFT.Mean || s1.ITLChunk.N != s2.ITLChunk.N || s1.MaxInFlight != 2 || s2.MaxInFlight != 2 {
		t.Errorf("repeat summary differs: %+v vs %+v", s1.ITLChunk, s2.ITLChunk)
	}
}

func TestWarningsFromHeader(t *testing.T) {
	a := NewAccumulator(Options{})
	a.SetHeader(&record.Header{Target: record.Target{Simulated: true},
		Workload: record.Workload{PromptLengths: "approximate"}})
	r := roleChunkRecord()
	r.Dispatched = r.Sent - 3*ms // 3 ms between dispatch and sent, a third of the 9 ms TTFT
	r.Connect = 1 * ms
	a.Add(r)
	s := a.Summary()
	if !s.Simulated {
		t.Error("not simulated")
	}
	for _, w := range []string{"built-in simulator", "prompt lengths are approximate",
		"servebench's own delay between dispatch and sent is 2.00 ms at p99 (22% of TTFT p50"} {
		if !hasWarning(s, w) {
			t.Errorf("no warning %q in %q", w, s.Warnings)
		}
	}
}

// TestApproximateWithTokenizer: where a tokenizer measured the prompts and some could not be
// built to their length, the note says so, not that no tokenizer was reachable.
func TestApproximateWithTokenizer(t *testing.T) {
	a := NewAccumulator(Options{})
	a.SetHeader(&record.Header{Workload: record.Workload{PromptLengths: "approximate", Tokenizer: "server:/tokenize"}})
	a.Add(roleChunkRecord())
	s := a.Summary()
	if !hasWarning(s, "server:/tokenize measured the prompts, but some could not be built") || hasWarning(s, "no tokenizer was reachable") {
		t.Errorf("warnings = %q", Texts(s.Warnings))
	}
}

// TestOneTokenPerEvent: events without counts whose number equals the server's output count
// carried one token each (llama.cpp): ITL (token) and the peak use them, and no note says the
// counts are unknown.
func TestOneTokenPerEvent(t *testing.T) {
	var a Accumulator
	a.Add(span(1.5, 2.7, []float64{1.6, 2.4, 2.6}, []int32{0, 0, 0})) // server output 3 = 3 events
	s := a.Summary()
	if s.ITLToken.N != 2 || s.ITLTokenSkipped != 0 || s.PeakUnknownEvents != 0 {
		t.Errorf("ITL (token) n=%d, skipped %d, peak unknown %d; want 2, 0, 0", s.ITLToken.N, s.ITLTokenSkipped, s.PeakUnknownEvents)
	}
	if hasWarning(s, "ITL (token)") || hasWarning(s, "one token per event") {
		t.Errorf("warnings = %q", Texts(s.Warnings))
	}
}

// TestClientDelayWarnings: a client delay of a millisecond or two beside a TTFT of hundreds
// is no bottleneck; connections the server closed are noted once, as information.
func TestClientDelayWarnings(t *testing.T) {
	a := NewAccumulator(Options{})
	for i := range 8 {
		base := int64(i) * 1000 * ms
		r := &record.Record{Phase: record.PhaseMeasure, Scheduled: base, Dispatched: base, Connect: ms, Sent: base + 2*ms,
			Events: []record.Event{{T: base + 300*ms}, {T: base + 310*ms}}, Done: base + 311*ms,
			OutputTokens: 2, OutputTokensSource: record.SourceServer}
		a.Add(r)
	}
	s := a.Summary()
	if hasWarning(s, "bottleneck") {
		t.Errorf("a 2 ms delay beside a 298 ms TTFT is called a bottleneck: %q", Texts(s.Warnings))
	}
	var conn []Warning
	for _, w := range s.Warnings {
		if strings.Contains(w.Text, "opened a new connection") {
			conn = append(conn, w)
		}
	}
	if len(conn) != 1 || conn[0].Level != Info || conn[0].Action == "" {
		t.Errorf("connection notes: %+v", conn)
	}
}

// TestWarningLevels: warnings come ordered by level (invalidates first), each text once.
func TestWarningLevels(t *testing.T) {
	ws := ordered([]Warning{{Level: Info, Text: "c"}, {Text: "b"}, {Level: Invalidates, Text: "a"}, {Text: "b"}})
	if got := strings.Join(Texts(ws), ","); got != "a,b,c" {
		t.Errorf("order %q, want a,b,c", got)
	}
	if b, _ := Distorts.MarshalText(); string(b) != "distorts" || (Warning{}).Level != Distorts {
		t.Errorf("default level %q", b)
	}
}
