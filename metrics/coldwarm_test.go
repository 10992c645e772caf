package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"

	"servebench/record"
)

// ollamaFinal reads the final object of an Ollama /api/generate stream recorded from 0.17.4
// (client/testdata) and returns its figures as client/ollama records them.
func ollamaFinal(t *testing.T, name string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile("../client/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	var m map[string]any
	last := lines[len(lines)-1]
	if err := json.Unmarshal(last, &m); err != nil || m["done"] != true {
		t.Fatalf("%s: last line is not the final object: %s", name, last)
	}
	out := map[string]float64{}
	for _, k := range []string{"total_duration", "load_duration", "prompt_eval_duration", "eval_duration"} {
		v, _ := m[k].(float64)
		out["ollama."+k+"_ms"] = v / 1e6 // nanoseconds on the wire
	}
	for _, k := range []string{"prompt_eval_count", "eval_count"} {
		out["ollama."+k], _ = m[k].(float64)
	}
	return out
}

// ollamaRecord is a completed measured request of run with the server figures srv and a TTFT
// of ttftMS.
func ollamaRecord(id, run int, srv map[string]float64, ttftMS float64) *record.Record {
	sent := int64(run*10_000+id*100+1) * ms
	first := sent + int64(ttftMS*float64(ms))
	return &record.Record{ID: id, Run: run, Phase: record.PhaseMeasure, Scheduled: sent, Dispatched: sent, Sent: sent,
		FirstEvent: first, Events: []record.Event{{T: first, N: 1}, {T: first + ms, N: 1}}, Done: first + 2*ms,
		OutputTokens: 2, OutputTokensSource: record.SourceServer, InputTokens: int(srv["ollama.prompt_eval_count"]),
		PromptTokens: int(srv["ollama.prompt_eval_count"]), PromptTokensSource: record.SourceServer, Server: srv}
}

func ollamaHeader() *record.Header {
	return &record.Header{Target: record.Target{API: "ollama", Model: "mini"}}
}

// TestOllamaRecordedCacheHit: Ollama 0.17.4 answered the same prompt twice, cold and from its
// prompt cache, with the same prompt_eval_count: only prompt_eval_duration tells them apart.
// A --repeat 3 of one request (run 1 cold, runs 2 and 3 cached, each run its own summary) is
// warned about in runs 2 and 3 only, judged against the earlier runs' cold request, because
// each of those runs has none of its own: read back (Runs) and as run writes them (After). Prompts are not compared: a repeat that draws fresh prompts
// is judged by the same timings.
func TestOllamaRecordedCacheHit(t *testing.T) {
	cold := ollamaFinal(t, "ollama-0.17.4-generate-cold.ndjson")
	cached := ollamaFinal(t, "ollama-0.17.4-generate-cached.ndjson")
	if cold["ollama.prompt_eval_count"] != cached["ollama.prompt_eval_count"] {
		t.Fatalf("fixtures: prompt_eval_count %v cold, %v cached: 0.17.4 counts the whole prompt on a hit",
			cold["ollama.prompt_eval_count"], cached["ollama.prompt_eval_count"])
	}
	runs := NewRuns(ollamaHeader(), Options{})
	runs.Add(ollamaRecord(0, 0, cold, 240))
	runs.Add(ollamaRecord(0, 1, cached, 12))
	runs.Add(ollamaRecord(0, 2, cached, 6))
	for i, rs := range runs.Summaries() {
		hit := hasWarning(rs.Summary, "from its prompt cache")
		if hit != (i > 0) {
			t.Errorf("run %d: cache-hit warning %v, want %v; warnings %q", i+1, hit, i > 0, rs.Summary.Warnings)
		}
		if i > 0 && !hasWarning(rs.Summary, "1 of 1 measured requests (id 0)") {
			t.Errorf("run %d: the warning does not name the request: %q", i+1, rs.Summary.Warnings)
		}
	}
	// run judges each run as it ends, with one Accumulator per run chained by After: the same
	var prev *Accumulator
	for i, srv := range []map[string]float64{cold, cached, cached} {
		acc := NewAccumulator(Options{})
		acc.SetHeader(ollamaHeader())
		acc.After(prev)
		acc.Add(ollamaRecord(0, i, srv, 10))
		if hit := hasWarning(acc.Summary(), "from its prompt cache"); hit != (i > 0) {
			t.Errorf("run %d judged as it ended: cache-hit warning %v, want %v", i+1, hit, i > 0)
		}
		prev = acc
	}
	// a run alone with only cached requests cannot tell: it says cache hits are unknown
	var a Accumulator
	a.SetHeader(ollamaHeader())
	for id := range 5 {
		a.Add(ollamaRecord(id, 0, cached, 12))
	}
	s := a.Summary()
	if hasWarning(s, "from its prompt cache") || !hasWarning(s, "Ollama reports no cached prompt tokens") {
		t.Errorf("cached-only run: warnings %q, want the cannot-tell hint", s.Warnings)
	}
}

// TestOllamaNoFalseHit: cold requests of different lengths (short prompts pay overhead per
// token; on a GPU a prompt twice as long costs up to half as much per token) and one slowed
// 2× (100 tokens in 120 ms) are not cache hits: the worst pair is 4× apart. Nor is a request
// whose prompt took many of its decode steps, beside an outlier 10× slower.
func TestOllamaNoFalseHit(t *testing.T) {
	var a Accumulator
	a.SetHeader(ollamaHeader())
	for id, c := range []struct{ n, ms float64 }{{20, 40}, {60, 50}, {100, 60}, {200, 80}, {400, 160}, {800, 300}, {100, 120}, {200, 60}} {
		a.Add(ollamaRecord(id, 0, map[string]float64{ollamaPromptCount: c.n, ollamaPromptMS: c.ms, ollamaLoadMS: 0.02}, c.ms+5))
	}
	s := a.Summary()
	if hasWarning(s, "from its prompt cache") || hasWarning(s, "loaded the model") || hasWarning(s, "first measured request") {
		t.Errorf("cold run: warnings %q", s.Warnings)
	}
	var b Accumulator
	b.SetHeader(ollamaHeader())
	b.Add(ollamaRecord(0, 0, map[string]float64{ollamaPromptCount: 200, ollamaPromptMS: 600, ollamaEvalCount: 8, ollamaEvalMS: 8}, 600))
	b.Add(ollamaRecord(1, 0, map[string]float64{ollamaPromptCount: 200, ollamaPromptMS: 60, ollamaEvalCount: 8, ollamaEvalMS: 8}, 60))
	if s := b.Summary(); hasWarning(s, "from its prompt cache") {
		t.Errorf("a 60 ms prompt of 60 decode steps called a hit: %q", s.Warnings)
	}
}

// TestOllamaOldCountHit: an Ollama that counts only the tokens it evaluated (before 0.17)
// shows a hit as a prompt_eval_count far under the requested length.
func TestOllamaOldCountHit(t *testing.T) {
	var a Accumulator
	a.SetHeader(ollamaHeader())
	r := ollamaRecord(3, 0, map[string]float64{ollamaPromptCount: 1, ollamaPromptMS: 2}, 5)
	r.InputTokens = 226
	a.Add(r)
	if s := a.Summary(); !hasWarning(s, "(id 3) from its prompt cache") {
		t.Errorf("warnings %q, want a hit on id 3", s.Warnings)
	}
}

// TestModelLoadNamed: the recorded cold request carried Ollama's model load (load_duration);
// measured, it is named with its id; in warmup, it is outside the measurement and not named.
func TestModelLoadNamed(t *testing.T) {
	cold := ollamaFinal(t, "ollama-0.17.4-generate-cold.ndjson")
	cached := ollamaFinal(t, "ollama-0.17.4-generate-cached.ndjson")
	if cold[ollamaLoadMS] <= loadMinMS || cached[ollamaLoadMS] >= loadMinMS {
		t.Fatalf("fixtures: load_duration %v ms cold, %v ms warm", cold[ollamaLoadMS], cached[ollamaLoadMS])
	}
	var a Accumulator
	a.SetHeader(ollamaHeader())
	a.Add(ollamaRecord(7, 0, cold, 540))
	noLoad := maps.Clone(cold)
	noLoad[ollamaLoadMS] = cached[ollamaLoadMS]
	a.Add(ollamaRecord(8, 0, noLoad, 240)) // the same prompt figures, without the load
	a.Add(ollamaRecord(9, 0, cached, 12))
	if s := a.Summary(); !hasWarning(s, "during measured request id 7 (load_duration") || strings.Contains(strings.Join(Texts(s.Warnings), "|"), "id 8 (load") {
		t.Errorf("warnings %q, want the load named on id 7", s.Warnings)
	}
	var w Accumulator
	w.SetHeader(ollamaHeader())
	r := ollamaRecord(0, 0, cold, 540)
	r.Phase = record.PhaseWarmup
	w.Add(r)
	w.Add(ollamaRecord(1, 0, cached, 12))
	if s := w.Summary(); hasWarning(s, "loaded the model") {
		t.Errorf("a load in warmup named: %q", s.Warnings)
	}
}

// TestSlowFirstRequest: any server's first measured request far slower than the rest is named,
// whatever the server reports; a slow request later in the run is not a cold start.
func TestSlowFirstRequest(t *testing.T) {
	for _, tc := range []struct {
		slow int
		want bool
	}{{0, true}, {4, false}} {
		var a Accumulator
		a.SetHeader(&record.Header{Target: record.Target{API: "openai-completions"}})
		for id := range 8 {
			ttft := 10.0
			if id == tc.slow {
				ttft = 300
			}
			a.Add(ollamaRecord(id, 0, nil, ttft))
		}
		s := a.Summary()
		got := hasWarning(s, "first measured request (id 0)")
		if got != tc.want {
			t.Errorf("slow request %d: named %v, want %v: %q", tc.slow, got, tc.want, s.Warnings)
		}
	}
}

// TestNativeCachedUnknown: a native API whose server reports no cached tokens says hits are
// unknown, as the OpenAI routes do; one that reports them does not.
func TestNativeCachedUnknown(t *testing.T) {
	for api, want := range map[string]bool{"tgi": true, "triton": true, "openai-completions": false} {
		var a Accumulator
		a.SetHeader(&record.Header{Target: record.Target{API: api}})
		a.Add(ollamaRecord(0, 0, nil, 10))
		s := a.Summary()
		if got := hasWarning(s, "(--api "+api+"), so whether TTFT measured prefix-cache hits is unknown"); got != want {
			t.Errorf("%s: hint %v, want %v: %q", api, got, want, s.Warnings)
		}
	}
	var a Accumulator
	a.SetHeader(&record.Header{Target: record.Target{API: "llamacpp"}})
	a.Add(ollamaRecord(0, 0, map[string]float64{"timings.cache_n": 0}, 10))
	if s := a.Summary(); hasWarning(s, "is unknown") {
		t.Errorf("llamacpp reported cache_n: %q", s.Warnings)
	}
}

// TestOllamaHitsByDesign: one prompt sent six times (the recorded cold and cached answers),
// each later one repeating the first whole (Record.Repeats 1): the five hits are the
// workload's, a note with both figures, not INVALID. The same hits on prompts sent for the
// first time (a replay on a warm server) stay INVALID, and the note says what the workload
// repeats.
func TestOllamaHitsByDesign(t *testing.T) {
	cold := ollamaFinal(t, "ollama-0.17.4-generate-cold.ndjson")
	cached := ollamaFinal(t, "ollama-0.17.4-generate-cached.ndjson")
	for _, c := range []struct {
		name    string
		repeats float64
		invalid bool
	}{{"sent again in the run", 1, false}, {"a replay", 0, true}, {"a short shared prefix", 0.5, true}} {
		var a Accumulator
		a.SetHeader(&record.Header{Target: record.Target{API: "ollama", Model: "mini"}, Workload: record.Workload{RepeatsRecorded: true}})
		a.Add(ollamaRecord(0, 0, cold, 240))
		for id := 1; id < 6; id++ {
			r := ollamaRecord(id, 0, cached, 12)
			r.Repeats = c.repeats
			a.Add(r)
		}
		s := a.Summary()
		if got := len(s.Invalid()) > 0; got != c.invalid {
			t.Errorf("%s: INVALID %v, want %v: %q", c.name, got, c.invalid, s.Warnings)
		}
		want := fmt.Sprintf("the workload repeats %.1f%% of its prompt tokens by design", 100*c.repeats*5/6)
		if !hasWarning(s, "served 5 of 6 measured requests (ids 1, 2, 3, 4, 5) from its prompt cache") || !hasWarning(s, want) {
			t.Errorf("%s: the note does not give both figures (%q): %q", c.name, want, s.Warnings)
		}
	}
}
