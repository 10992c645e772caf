package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"servebench/exitcode"
	"servebench/record"
)

// TestResponsesMatchesChat runs one workload through --api openai-chat and --api
// openai-responses against the built-in simulator (its roofline engine, so TTFT depends on
// the prompt's token count) and checks that the two APIs give the same figures: the same
// token totals, and p50 TTFT and TPOT of the same size. One user at a time keeps the engine's
// batching out of it: at 8 users, two chat runs alone differ by 30 ms in p50 TTFT, as
// prefills happen to line up or not. Each API runs twice, a chat run and a responses run at
// once, and each keeps its lower median: a neighbour can slow one run of an API, but not
// both. On an idle machine the p50s agree within 0.3 ms (TTFT) and 0.02 ms (ITL); the test
// runs beside the parallel tests, so it holds them within a factor of 2 of chat's, the
// reference taken in the same test: what it guards is that the Responses stream's first
// content, not its first event (response.created, at once) or its last, starts TTFT, and
// that the tokens after it are timed as chat's (client/responses' TestTranscripts holds
// which events are content). TPOT, not ITL: on a busy machine reads coalesce the stream's
// chunks, and the ITL p50 of both APIs was 0. Before, it
// held 3 ms or 25% alone before the parallel tests: 14 s of the package's serial phase.
func TestResponsesMatchesChat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sums := map[string]map[string]any{}
	best := map[string]map[string]float64{}
	apis := []string{"openai-chat", "openai-responses", "openai-chat", "openai-responses"}
	codes, errss := make([]int, len(apis)), make([]string, len(apis))
	file := func(i int, ext string) string { return filepath.Join(dir, fmt.Sprintf("%s-%d.%s", apis[i], i, ext)) }
	// a chat run and a responses run at once, each against its own built-in simulator, twice:
	// a neighbour's load falls on both of a pair alike
	for pair := 0; pair < len(apis); pair += 2 {
		var wg sync.WaitGroup
		for i := pair; i < pair+2; i++ {
			wg.Go(func() {
				codes[i], _, errss[i] = runMain(t, "run", "-q", "--api", apis[i], "--input-tokens", "256", "--output-tokens", "16",
					"--requests", "24", "--concurrency", "1", "--warmup", "0", "--seed", "5", "-o", file(i, "jsonl"), "--json", file(i, "json"))
			})
		}
		wg.Wait()
	}
	for i, api := range apis {
		rec, js := file(i, "jsonl"), file(i, "json")
		if codes[i] != 0 {
			t.Fatalf("%s: exit %d: %s", api, codes[i], errss[i])
		}
		b, _ := os.ReadFile(js)
		var s map[string]any
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		sums[api] = s
		if best[api] == nil {
			best[api] = map[string]float64{}
		}
		for _, k := range []string{"median_ttft_ms", "median_tpot_ms"} {
			if v, _ := s[k].(float64); best[api][k] == 0 || v < best[api][k] {
				best[api][k] = v
			}
		}
		if hdr, _ := readRecords(t, rec); hdr.Target.API != api || !hdr.Target.Simulated {
			t.Errorf("%s: header target %+v", api, hdr.Target)
		}
	}
	chat, resp := sums["openai-chat"], sums["openai-responses"]
	for _, k := range []string{"completed", "failed", "total_input_tokens", "total_output_tokens"} {
		if chat[k] != resp[k] {
			t.Errorf("%s: chat %v, responses %v", k, chat[k], resp[k])
		}
	}
	if chat["completed"] != 24.0 {
		t.Errorf("completed %v, want 24", chat["completed"])
	}
	for _, k := range []string{"median_ttft_ms", "median_tpot_ms"} {
		c, r := best["openai-chat"][k], best["openai-responses"][k]
		t.Logf("%s: chat %.3f, responses %.3f (Δ %.3f ms)", k, c, r, r-c)
		if c <= 0 || r < c/2 || r > 2*c {
			t.Errorf("%s: chat %.3f ms, responses %.3f ms", k, c, r)
		}
	}
}

// TestResponsesFaultsThroughRun: the simulator's faults in the Responses API's shapes, through
// a real run with --api openai-responses, end as the documented class with the server's words
// and the events received before the failure kept; the run goes on.
func TestResponsesFaultsThroughRun(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	const n = 2
	for _, tc := range []struct{ fault, class, msg string }{
		{"error_event=3", record.ErrStreamErrorEvent, "simulated engine error"},
		{"abort=3", record.ErrStreamErrorEvent, "server_error: simulated abort"},
		{"disconnect=3", record.ErrTruncated, "stream cut"},
		{"no_done", record.ErrTruncated, "without its final object"},
		{"malformed_json=3", record.ErrDecode, "event"},
		{"multi_token=3", "", ""},
		{"keepalive", "", ""},
	} {
		p := filepath.Join(t.TempDir(), "r.jsonl")
		code, _, errs := runMain(t, "run", "-q", "--url", url, "--api", "openai-responses", "--header", "X-Sim-Fault="+tc.fault,
			"--input-tokens", "16", "--output-tokens", "8", "--requests", fmt.Sprint(n), "--concurrency", "1", "--warmup", "0", "-o", p)
		if want := map[bool]int{true: exitcode.Error, false: 0}[tc.class != ""]; code != want {
			t.Fatalf("%s: exit %d, want %d: %s", tc.fault, code, want, errs)
		}
		_, recs := readRecords(t, p)
		if len(recs) != n {
			t.Fatalf("%s: %d records, want %d", tc.fault, len(recs), n)
		}
		for _, r := range recs {
			if r.ErrorClass != tc.class || !strings.Contains(r.Error, tc.msg) {
				t.Errorf("%s: request %d: %s %q, want %s with %q", tc.fault, r.ID, r.ErrorClass, r.Error, tc.class, tc.msg)
			}
			if tc.class != "" && tc.fault != "no_done" && len(r.Events) != 3 {
				t.Errorf("%s: request %d kept %d events, want the 3 before the fault", tc.fault, r.ID, len(r.Events))
			}
		}
	}
}
