package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"servebench/internal/peertest"
	"servebench/metrics"
	"servebench/sim"
)

// TestReasoningAgainstSimulator runs a reasoning model on the simulator (the first 8 of 16
// tokens of every answer are reasoning) through `servebench run --api openai-chat` and checks the
// bar: the reported TTFT (first token of any kind) and TTFO (first answer token) match the
// simulator's truth log of the same run within 1 ms at p50. The truth of a request is its
// first reasoning and first answer event's write less the kernel's receive time of the
// request's first bytes, as the selftest pairs them; ours is kernel receive and send times
// too, so on loopback the two agree to the scheduler's noise. The simulator stamps each write
// twice, just before it (write_began_ns) and after its flush (written_ns), and the bytes left
// between the two: each request's truth lies between its two figures, so the true p50 lies
// between their p50s, and ours must be within 1 ms of that interval. (The stamp after the
// flush alone is late on a busy machine: the write wakes our reader, which may run first
// while the simulator waits for a core; it once put the truth 1.005 ms after ours.) The
// 15 ms ITL leaves the client time to read each event before the next arrives: events that
// come in one read share its receive time (load/observer.go), which on a machine too busy to
// read a 4 ms stream in time put the first answer event several ms late.
func TestReasoningAgainstSimulator(t *testing.T) {
	// the Responses API streams the thinking as response.reasoning_text.delta events of a
	// reasoning item before the message's output_text deltas (vLLM's shape): the same phases
	for _, api := range []string{"openai-chat", "openai-responses"} {
		t.Run(api, func(t *testing.T) {
			truth := filepath.Join(t.TempDir(), "truth.jsonl")
			srv, url := startSimServer(t, func(c *sim.Config) {
				c.TTFT, c.ITL, c.TruthFile, c.ReasoningTokens = 60*time.Millisecond, 15*time.Millisecond, truth, 8
			})
			dir := t.TempDir()
			js, rec, txt := filepath.Join(dir, "s.json"), filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "s.txt")
			code, _, errs := runMain(t, "run", "-q", "--url", url, "--api", api, "--input-tokens", "16", "--output-tokens", "16",
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
			if s["completed"] != 32.0 || s["reasoning_requests"] != 32.0 || s["total_reasoning_tokens"] != 256.0 || s["total_answer_tokens"] != 256.0 || s["good_requests"] != 32.0 {
				t.Fatalf("completed %v, reasoning requests %v, reasoning tokens %v, answer tokens %v, good %v; want 32, 32, 256, 256, 32",
					s["completed"], s["reasoning_requests"], s["total_reasoning_tokens"], s["total_answer_tokens"], s["good_requests"])
			}
			first, answer := truthFirsts(t, truth)
			for _, c := range []struct {
				key   string
				truth truthSpan
			}{{"median_ttft_ms", first}, {"median_ttfo_ms", answer}} {
				got, _ := s[c.key].(float64)
				lo, hi := metrics.Quantile(c.truth.began, 50), metrics.Quantile(c.truth.written, 50)
				t.Logf("%s: %.3f ms, truth between %.3f and %.3f ms over %d requests", c.key, got, lo, hi, len(c.truth.written))
				if len(c.truth.written) != 32 || len(c.truth.began) != 32 || got < lo-1 || got > hi+1 {
					t.Errorf("%s %.3f ms against the truth log's [%.3f, %.3f] ms (%d requests): want within 1 ms of it",
						c.key, got, lo, hi, len(c.truth.written))
				}
			}
			// The records carry the phases; the text report shows them.
			_, recs := readRecords(t, rec)
			for _, r := range recs {
				if len(r.Events) != 16 || r.ReasoningEvents != 8 || r.FirstAnswer != r.Events[8].T || r.ReasoningTokens != 8 || r.ReasoningTokensSource != "server" {
					t.Fatalf("record %d: %d events, reasoning events %d, first answer %d, reasoning tokens %d (%s); want 16, 8, event 8's time, 8 (server)",
						r.ID, len(r.Events), r.ReasoningEvents, r.FirstAnswer, r.ReasoningTokens, r.ReasoningTokensSource)
				}
			}
			if code, _, errs := runMain(t, "report", rec, "-o", txt); code != 0 {
				t.Fatalf("report: exit %d: %s", code, errs)
			}
			out, _ := os.ReadFile(txt)
			for _, want := range []string{"TTFO (1st answer)", "ITL (reasoning)", "ITL (answer)", "32 of 32 requests reasoned", "reasoning tokens 256"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("text report lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// truthSpan is a truth figure per request, sorted, twice: from the simulator's stamp before
// the event's write and from the one after it (ms); the truth lies between the two.
type truthSpan struct{ began, written []float64 }

// truthFirsts reads the simulator's truth log: per request, its first event of any kind
// (reasoning or content) and its first answer (content) event, each less the request's
// arrival (the kernel's receive time, else the first read), in ms.
func truthFirsts(t *testing.T, path string) (first, answer truthSpan) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type write struct{ began, written int64 }
	start, firsts, answers := map[string]int64{}, map[string]write{}, map[string]write{}
	var ids []string
	for line := range strings.Lines(string(b)) {
		var e struct {
			ID      string `json:"request_id"`
			Kind    string `json:"kind"`
			Written int64  `json:"written_ns"`
			Began   int64  `json:"write_began_ns"`
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
		case firsts[e.ID].written == 0:
			firsts[e.ID] = write{e.Began, e.Written}
		}
		if e.Kind == "content" && answers[e.ID].written == 0 {
			answers[e.ID] = write{e.Began, e.Written}
		}
	}
	ms := func(d int64) float64 { return float64(d) / 1e6 }
	for _, id := range ids {
		f, a := firsts[id], answers[id]
		if f.written != 0 && a.written != 0 {
			if f.began <= 0 || f.began > f.written || a.began <= 0 || a.began > a.written {
				t.Fatalf("request %s: writes [%d, %d] and [%d, %d]: want each begun before it was written", id, f.began, f.written, a.began, a.written)
			}
			first.began, first.written = append(first.began, ms(f.began-start[id])), append(first.written, ms(f.written-start[id]))
			answer.began, answer.written = append(answer.began, ms(a.began-start[id])), append(answer.written, ms(a.written-start[id]))
		}
	}
	for _, s := range [][]float64{first.began, first.written, answer.began, answer.written} {
		slices.Sort(s)
	}
	return first, answer
}

// thinkingTemplate is a Qwen3-style chat template: the generation prompt opens <think>, so
// llama.cpp (b11669, --jinja --reasoning-format deepseek) streams the output as
// delta.reasoning_content until the model writes </think>. The random-weight test model never
// does, so every request is all reasoning and no answer.
const thinkingTemplate = `{%- for message in messages %}
{%- if message.role == "assistant" %}
{%- set reasoning_content = message.reasoning_content if message.reasoning_content is defined and message.reasoning_content is string else "" %}
{{- '<|im_start|>assistant\n<think>\n' + reasoning_content.strip('\n') + '\n</think>\n\n' + message.content.lstrip('\n') + '<|im_end|>\n' }}
{%- else %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}
{{- '<think>\n\n</think>\n\n' }}
{%- else %}
{{- '<think>\n' }}
{%- endif %}
{%- endif %}
`

// TestReasoningLlamaCpp reads a real server's reasoning stream: llama.cpp with a thinking
// template sends delta.reasoning_content, and the run counts every event as reasoning, no
// answer (no TTFO), reasoning tokens one per event (llama.cpp sends no
// completion_tokens_details). With thinking turned off per request, the same server answers
// and no reasoning is reported.
func TestReasoningLlamaCpp(t *testing.T) {
	tmpl := filepath.Join(t.TempDir(), "think.jinja")
	if err := os.WriteFile(tmpl, []byte(thinkingTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	url := peertest.Llama(t, "tiny.gguf", "-t", "1", "-np", "2", "-c", "1024", "--jinja",
		"--chat-template-file", tmpl, "--reasoning-format", "deepseek")
	for _, tc := range []struct {
		name  string
		extra []string
		want  func(s map[string]any) bool
	}{
		{"thinking", nil, func(s map[string]any) bool {
			return s["reasoning_requests"] == 4.0 && s["no_answer_requests"] == 4.0 && s["total_reasoning_tokens"] == 32.0 && s["count_ttfo"] == 0.0
		}},
		{"thinking off", []string{"--extra-body", `{"chat_template_kwargs":{"enable_thinking":false}}`}, func(s map[string]any) bool {
			_, ok := s["reasoning_requests"]
			return !ok
		}},
	} {
		js := filepath.Join(t.TempDir(), "s.json")
		args := append([]string{"run", "-q", "--url", url, "--api", "openai-chat", "--input-tokens", "8", "--output-tokens", "8",
			"--requests", "4", "--concurrency", "2", "--warmup", "0", "--json", js, "-o", filepath.Join(t.TempDir(), "r.jsonl")}, tc.extra...)
		if code, _, errs := runMain(t, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errs)
		}
		var s map[string]any
		b, _ := os.ReadFile(js)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if s["completed"] != 4.0 || !tc.want(s) {
			t.Errorf("%s: completed %v, reasoning requests %v, no answer %v, reasoning tokens %v, TTFO count %v", tc.name,
				s["completed"], s["reasoning_requests"], s["no_answer_requests"], s["total_reasoning_tokens"], s["count_ttfo"])
		}
	}
}
