package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/record"
	"servebench/sim"
)

// TestResponsesMatchesChat runs one workload through --api openai-chat and --api
// openai-responses, at once, each against a simulator of its own in fixed mode (the first
// token 300 ms after a request arrives, then one every 30 ms), and checks that the two APIs
// give the same figures where the machine's load cannot move them: the same completions and
// token totals, and on both, timings the server's own delays bound from below. No request's
// TTFT is under 300 ms (the server sends no content before then: a TTFT started at the
// Responses stream's first event, response.created, sent at once, would be), and the TPOT p50
// is at least half the 30 ms (a TTFT taken at the last event would leave about 0). Which
// Responses events are content is client/responses' TestTranscripts. Load only adds delay, so
// the test runs beside the parallel tests; before, it held the two APIs' p50s within 3 ms or
// 25% of each other, alone before them (14 s serial), and beside them and busy loops (load
// 14 to 16) the p50s of the two were up to 3x apart.
func TestResponsesMatchesChat(t *testing.T) {
	t.Parallel()
	const ttft, itl = 300 * time.Millisecond, 30 * time.Millisecond
	dir := t.TempDir()
	apis := []string{"openai-chat", "openai-responses"}
	codes, errss := make([]int, len(apis)), make([]string, len(apis))
	file := func(i int, ext string) string { return filepath.Join(dir, apis[i]+"."+ext) }
	var wg sync.WaitGroup
	for i := range apis {
		url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = ttft, itl })
		wg.Go(func() {
			codes[i], _, errss[i] = runMain(t, "run", "-q", "--url", url, "--api", apis[i], "--input-tokens", "64", "--output-tokens", "16",
				"--requests", "16", "--concurrency", "4", "--warmup", "0", "--seed", "5", "-o", file(i, "jsonl"), "--json", file(i, "json"))
		})
	}
	wg.Wait()
	sums := make([]map[string]any, len(apis))
	for i, api := range apis {
		if codes[i] != 0 {
			t.Fatalf("%s: exit %d: %s", api, codes[i], errss[i])
		}
		b, _ := os.ReadFile(file(i, "json"))
		if err := json.Unmarshal(b, &sums[i]); err != nil {
			t.Fatal(err)
		}
		if hdr, _ := readRecords(t, file(i, "jsonl")); hdr.Target.API != api || !hdr.Target.Simulated {
			t.Errorf("%s: header target %+v", api, hdr.Target)
		}
		minTTFT, _ := sums[i]["min_ttft_ms"].(float64)
		tpot, _ := sums[i]["median_tpot_ms"].(float64)
		t.Logf("%s: TTFT min %.2f p50 %.2f ms, TPOT p50 %.2f ms", api, minTTFT, sums[i]["median_ttft_ms"], tpot)
		if minTTFT < ms(ttft)-1 || tpot < ms(itl)/2 {
			t.Errorf("%s: TTFT min %.2f ms, TPOT p50 %.2f ms: the server sent its first token after %v and the rest %v apart",
				api, minTTFT, tpot, ttft, itl)
		}
	}
	chat, resp := sums[0], sums[1]
	for _, k := range []string{"completed", "failed", "total_input_tokens", "total_output_tokens"} {
		if chat[k] != resp[k] {
			t.Errorf("%s: chat %v, responses %v", k, chat[k], resp[k])
		}
	}
	if chat["completed"] != 16.0 {
		t.Errorf("completed %v, want 16", chat["completed"])
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
