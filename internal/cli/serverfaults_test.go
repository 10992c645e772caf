package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/load"
	"servebench/record"
	"servebench/sim"
)

// TestServerShapedFaultsThroughRun runs the real `servebench run` against a simulator that
// gives every request one of the faults that copy a real server's stream (--fault KIND=1):
// vLLM's finish_reason "abort", llama.cpp's `error:` line, vLLM's text-free chunks whose
// tokens continuous usage still counts, and a streamed tool call. The client reads each of
// these from fixtures already; this checks them end to end, from the simulator's wire to the
// records and the summary.
func TestServerShapedFaultsThroughRun(t *testing.T) {
	t.Parallel()
	const n, out = 3, 8
	for _, tc := range []struct {
		fault string
		api   string
		class string // "" = the request succeeds
		msg   string // in every failed record's error
		// for a success: the tokens each content event carries (the sum is the output)
		perEvent string
		// probe: what the simulator's stream must contain, so that a success is known to
		// have read the fault's shape and not a plain stream
		probe string
	}{
		{fault: "abort", api: "openai-completions", class: record.ErrStreamErrorEvent, msg: `finish_reason "abort"`},
		{fault: "abort", api: "openai-chat", class: record.ErrStreamErrorEvent, msg: `finish_reason "abort"`},
		{fault: "error_line", api: "openai-completions", class: record.ErrStreamErrorEvent, msg: "simulated server error (servebench sim fault error_line)"},
		{fault: "error_line", api: "openai-chat", class: record.ErrStreamErrorEvent, msg: "simulated server error (servebench sim fault error_line)"},
		// 8 tokens, the 4th text-free: its token rides on the 5th's event
		{fault: "hidden_tokens", api: "openai-completions", perEvent: "1 1 1 2 1 1 1"},
		{fault: "hidden_tokens", api: "openai-chat", perEvent: "1 1 1 2 1 1 1"},
		{fault: "tool_calls", api: "openai-chat", perEvent: "1 1 1 1 1 1 1 1", probe: `"finish_reason":"tool_calls"`},
		{fault: "tool_calls", api: "openai-completions", perEvent: "1 1 1 1 1 1 1 1"}, // no effect there
	} {
		t.Run(tc.fault+" "+tc.api, func(t *testing.T) {
			dir := t.TempDir()
			truthPath := filepath.Join(dir, "truth.jsonl")
			srv, url := startSimServer(t, func(c *sim.Config) {
				c.TTFT, c.ITL, c.TruthFile = 20*time.Millisecond, 2*time.Millisecond, truthPath
				if err := c.Faults.Set(tc.fault + "=1"); err != nil { // the --fault flag's parser
					t.Fatal(err)
				}
			})
			if tc.probe != "" {
				if body := probeStream(t, url, tc.api == "openai-chat"); !strings.Contains(body, tc.probe) {
					t.Fatalf("the simulator's stream has no %s:\n%s", tc.probe, body)
				}
			}
			p, js := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.json")
			code, stdout, errs := runMain(t, "run", "-q", "--url", url, "--api", tc.api,
				"--input-tokens", "16", "--output-tokens", fmt.Sprint(out), "--requests", fmt.Sprint(n), "--concurrency", "1",
				"--warmup", "0", "-o", p, "--json", js)
			wantCode := map[bool]int{true: exitcode.Error, false: 0}[tc.class != ""]
			if code != wantCode {
				t.Fatalf("exit %d, want %d: %s\n%s", code, wantCode, errs, stdout)
			}
			if err := srv.Close(); err != nil { // flushes the truth log
				t.Fatal(err)
			}
			truth := readTruthTokens(t, truthPath)
			hdr, recs := readRecords(t, p)
			if !hdr.Target.Simulated || len(recs) != n {
				t.Fatalf("simulated %v, %d records, want a simulated run of %d", hdr.Target.Simulated, len(recs), n)
			}
			if tc.class != "" {
				if !strings.Contains(errs, "every request failed; the first: "+tc.class) || !strings.Contains(stdout, fmt.Sprintf("%d failed", n)) {
					t.Errorf("stderr %q, summary:\n%s\nwant %d %s failures", errs, stdout, n, tc.class)
				}
				for _, r := range recs {
					if r.ErrorClass != tc.class || !strings.Contains(r.Error, tc.msg) {
						t.Errorf("request %d: class %q, error %q; want %q with %q", r.ID, r.ErrorClass, r.Error, tc.class, tc.msg)
					}
					if len(r.Events) != out/2 { // the fault strikes after half the output
						t.Errorf("request %d: %d events kept, want the %d before the fault", r.ID, len(r.Events), out/2)
					}
				}
				return
			}
			for _, r := range recs {
				if !r.OK() {
					t.Errorf("request %d failed: %s: %s", r.ID, r.ErrorClass, r.Error)
					continue
				}
				per := make([]string, len(r.Events))
				sum := 0
				for i, e := range r.Events {
					per[i], sum = fmt.Sprint(e.N), sum+int(e.N)
				}
				if r.OutputTokens != out || sum != out || strings.Join(per, " ") != tc.perEvent {
					t.Errorf("request %d: %d output tokens (%s), events carry %v (sum %d); want %d, events %s",
						r.ID, r.OutputTokens, r.OutputTokensSource, per, sum, out, tc.perEvent)
				}
				// the truth pairs with the client event for event (selftest pairs them by index)
				if got, want := fmt.Sprint(truth[load.RequestID(r.Run, r.ID)]), "["+tc.perEvent+"]"; got != want {
					t.Errorf("request %d: the truth log's content events carry %s, want %s like the client's", r.ID, got, want)
				}
				if len(r.Events) == 0 || r.Sent == 0 || r.Events[0].T <= r.Sent {
					t.Errorf("request %d: no TTFT (sent %d, events %v)", r.ID, r.Sent, r.Events)
				}
			}
			b, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			var sum map[string]any
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatalf("--json: %v", err)
			}
			if sum["completed"] != float64(n) || sum["total_output_tokens"] != float64(n*out) {
				t.Errorf("--json: completed %v, total_output_tokens %v; want %d and %d", sum["completed"], sum["total_output_tokens"], n, n*out)
			}
			if ttft, _ := sum["mean_ttft_ms"].(float64); !(ttft > 0) {
				t.Errorf("--json: mean_ttft_ms %v, want a TTFT", sum["mean_ttft_ms"])
			}
		})
	}
}

// probeStream is the body of one streamed request of 4 tokens, sent with plain net/http.
func probeStream(t *testing.T, url string, chat bool) string {
	t.Helper()
	path, body := "/v1/completions", `{"prompt":"hi","max_tokens":4,"ignore_eos":true,"stream":true}`
	if chat {
		path, body = "/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":4,"ignore_eos":true,"stream":true}`
	}
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readTruthTokens reads a simulator truth log: the tokens of each request's content events,
// in order.
func readTruthTokens(t *testing.T, path string) map[string][]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev struct {
			RequestID string `json:"request_id"`
			Tokens    int    `json:"tokens"`
			Kind      string `json:"kind"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("truth log line %q: %v", line, err)
		}
		if ev.Kind == "content" {
			out[ev.RequestID] = append(out[ev.RequestID], ev.Tokens)
		}
	}
	return out
}
