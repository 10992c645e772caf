package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/sim"
)

// TestReasoningAgainstSimulator runs a reasoning model on the simulator (the first 20 of 32
// tokens of every answer are reasoning) through `servebench run --api openai-chat` and checks the
// issue's bar: the reported TTFT (first token of any kind) and TTFO (first answer token)
// match the simulator's truth log of the same run within 1 ms at p50. The truth of a request
// is its first reasoning and first answer event's write (after the flush) less the kernel's
// receive time of the request's first bytes, as the selftest pairs them; ours is kernel
// receive and send times too, so on loopback the two agree to the scheduler's noise.
func TestReasoningAgainstSimulator(t *testing.T) {
	truth := filepath.Join(t.TempDir(), "truth.jsonl")
	srv, url := startSimServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL, c.TruthFile, c.ReasoningTokens = 60*time.Millisecond, 4*time.Millisecond, truth, 20
	})
	dir := t.TempDir()
	js, rec, txt := filepath.Join(dir, "s.json"), filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "s.txt")
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--api", "openai-chat", "--input-tokens", "16", "--output-tokens", "32",
		"--requests", "32", "--concurrency", "8", "--warmup", "0", "--slo", "ttfo=10s", "-o", rec, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if err := srv.Close(); err != nil { // flushes the truth log
		t.Fatal(err)
	}
	var s map[string]any
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s["completed"] != 32.0 || s["reasoning_requests"] != 32.0 || s["total_reasoning_tokens"] != 640.0 || s["total_answer_tokens"] != 384.0 || s["good_requests"] != 32.0 {
		t.Fatalf("completed %v, reasoning requests %v, reasoning tokens %v, answer tokens %v, good %v; want 32, 32, 640, 384, 32",
			s["completed"], s["reasoning_requests"], s["total_reasoning_tokens"], s["total_answer_tokens"], s["good_requests"])
	}
	ttft, ttfo := truthFirsts(t, truth)
	for _, c := range []struct {
		key   string
		truth []float64
	}{{"median_ttft_ms", ttft}, {"median_ttfo_ms", ttfo}} {
		got, _ := s[c.key].(float64)
		want := metrics.Quantile(c.truth, 50)
		t.Logf("%s: %.3f ms, truth %.3f ms over %d requests", c.key, got, want, len(c.truth))
		if len(c.truth) != 32 || math.Abs(got-want) > 1 {
			t.Errorf("%s %.3f ms against the truth log's %.3f ms (%d requests): want within 1 ms", c.key, got, want, len(c.truth))
		}
	}
	// The records carry the phases; the text report shows them.
	_, recs := readRecords(t, rec)
	for _, r := range recs {
		if r.ReasoningEvents != 20 || r.FirstAnswer != r.Events[20].T || r.ReasoningTokens != 20 || r.ReasoningTokensSource != "server" {
			t.Fatalf("record %d: reasoning events %d, first answer %d (event 20 at %d), reasoning tokens %d (%s); want 20, event 20, 20 (server)",
				r.ID, r.ReasoningEvents, r.FirstAnswer, r.Events[20].T, r.ReasoningTokens, r.ReasoningTokensSource)
		}
	}
	if code, _, errs := runMain(t, "report", rec, "-o", txt); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	out, _ := os.ReadFile(txt)
	for _, want := range []string{"TTFO (1st answer)", "ITL (reasoning)", "ITL (answer)", "32 of 32 requests reasoned", "reasoning tokens 640"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

// truthFirsts reads the simulator's truth log: per request, its first event of any kind
// (reasoning or content) and its first answer (content) event, each less the request's
// arrival (the kernel's receive time, else the first read), in ms.
func truthFirsts(t *testing.T, path string) (ttft, ttfo []float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start, first, answer := map[string]int64{}, map[string]int64{}, map[string]int64{}
	var ids []string
	for line := range strings.Lines(string(b)) {
		var e struct {
			ID      string `json:"request_id"`
			Kind    string `json:"kind"`
			Written int64  `json:"written_ns"`
			Read    int64  `json:"read_ns"`
			Arrived int64  `json:"arrived_ns"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("truth line %q: %v", line, err)
		}
		switch {
		case e.Kind == "request":
			start[e.ID] = e.Read
			if e.Arrived > 0 {
				start[e.ID] = e.Arrived
			}
			ids = append(ids, e.ID)
		case e.Kind != "reasoning" && e.Kind != "content":
		case first[e.ID] == 0:
			first[e.ID] = e.Written
		}
		if e.Kind == "content" && answer[e.ID] == 0 {
			answer[e.ID] = e.Written
		}
	}
	for _, id := range ids {
		if first[id] != 0 && answer[id] != 0 {
			ttft = append(ttft, float64(first[id]-start[id])/1e6)
			ttfo = append(ttfo, float64(answer[id]-start[id])/1e6)
		}
	}
	slices.Sort(ttft)
	slices.Sort(ttfo)
	return ttft, ttfo
}
