package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servebench/exitcode"
	"servebench/record"
)

// TestEveryFaultThroughRun injects each simulator fault into every request of a real
// `servebench run` (the X-Sim-Fault header) and checks the records and the summary: the
// documented error class, partial output kept, every request recorded (the run continues),
// a valid records file, exit 0, and no panic.
func TestEveryFaultThroughRun(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	const n = 3
	for _, tc := range []struct {
		fault   string
		class   string // "" = the request succeeds
		partial bool   // a failed request keeps the events it received
		extra   []string
	}{
		{"http_429", record.ErrRateLimited, false, nil},
		{"http_500", record.ErrHTTP5xx, false, nil},
		{"http_503", record.ErrHTTP5xx, false, nil},
		{"error_event=3", record.ErrStreamErrorEvent, true, nil},
		{"disconnect=3", record.ErrTruncated, true, nil},
		{"malformed_json=3", record.ErrDecode, true, nil},
		// the stall comes mid-stream; the timeouts leave the first tokens time to arrive
		// beside busy loops (300 ms lost them at load 18 under -race) and still end the request
		// well before the stall would
		{"stall=2s", record.ErrTimeout, true, []string{"--idle-timeout", "500ms"}},
		{"stall=2s", record.ErrTimeout, true, []string{"--request-timeout", "1s"}},
		{"stall=50ms", "", false, []string{"--idle-timeout", "1s"}},
		{"slow_headers=100ms", "", false, []string{"--idle-timeout", "1s"}},
		{"no_done", "", false, nil},
		{"multi_token=3", "", false, nil},
		{"role_chunk", "", false, []string{"--api", "openai-chat"}},
		{"zero_usage", "", false, nil},
		{"keepalive", "", false, nil},
	} {
		t.Run(strings.Join(append([]string{tc.fault}, tc.extra...), " "), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "r.jsonl")
			args := append([]string{"run", "-q", "--url", url, "--header", "X-Sim-Fault=" + tc.fault,
				"--input-tokens", "16", "--output-tokens", "8", "--requests", fmt.Sprint(n), "--concurrency", "1",
				"--warmup", "0", "-o", p}, tc.extra...)
			code, out, errs := runMain(t, args...)
			// a run in which every request failed is exit 1 with the first failure's message
			if wantCode := map[bool]int{true: exitcode.Error, false: 0}[tc.class != ""]; code != wantCode || (code != 0 && !strings.Contains(errs, "every request failed; the first: "+tc.class)) {
				t.Fatalf("exit %d, want %d: %s", code, wantCode, errs)
			}
			_, recs := readRecords(t, p) // fails the test on any invalid line
			if len(recs) != n {
				t.Fatalf("%d records, want %d: the run did not continue", len(recs), n)
			}
			for _, r := range recs {
				if r.ErrorClass != tc.class {
					t.Errorf("request %d: class %q (%s), want %q", r.ID, r.ErrorClass, r.Error, tc.class)
				}
				if tc.partial && len(r.Events) == 0 {
					t.Errorf("request %d: partial output lost", r.ID)
				}
			}
			if tc.class != "" && !strings.Contains(out, fmt.Sprintf("%d failed", n)) || (tc.class != "" && !strings.Contains(out, tc.class)) {
				t.Errorf("summary does not count %d %s failures:\n%s", n, tc.class, out)
			}
		})
	}
}

// TestBadInputBackends covers the bad input that TestBadInput does not: a wrong
// model name ends with the server's own message, a bad --tokenizer or a Triton run without a
// model is a usage error naming the flag.
func TestBadInputBackends(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	badTok := filepath.Join(dir, "tok.json")
	os.WriteFile(badTok, []byte(`{"model":{"type":"Unigram","vocab":[]}}`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"wrong model", []string{"run", "-q", "--url", url, "--model", "no-such-model", "--requests", "2"}, exitcode.Error, "no-such-model"},
		{"missing tokenizer file", []string{"run", "--url", url, "--tokenizer", filepath.Join(dir, "none.json")}, exitcode.Usage, "--tokenizer"},
		{"unsupported tokenizer", []string{"run", "--url", url, "--tokenizer", badTok}, exitcode.Usage, `unsupported model "Unigram"`},
		{"triton without model", []string{"run", "--url", url, "--api", "triton"}, exitcode.Usage, "--model is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(tc.args, "-o", filepath.Join(dir, tc.name+".jsonl"))
			code, _, errs := runMain(t, args...)
			if code != tc.code || !strings.Contains(errs, tc.want) || strings.Count(withoutBuildNotice(errs), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit %d and %q on one line", code, errs, tc.code, tc.want)
			}
		})
	}
}

// TestAutoAPIAndLocalTokenizer: --api auto finds that the simulator speaks OpenAI, and
// --tokenizer measures prompt lengths locally; the simulator's own tokenizer counts
// differently, and the summary says so.
func TestAutoAPIAndLocalTokenizer(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errs := runMain(t, "run", "--url", url, "--api", "auto", "--tokenizer", "../../tokenizer/testdata/bytelevel-bpe.json",
		"--input-tokens", "24", "--output-tokens", "4", "--requests", "4", "--concurrency", "2", "--warmup", "0", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	hdr, recs := readRecords(t, p)
	if hdr.Target.API != "openai-completions" || !strings.Contains(errs, "--api auto: the server speaks openai-completions") {
		t.Errorf("api %q; stderr %s", hdr.Target.API, errs)
	}
	if hdr.Workload.Tokenizer != "local:bytelevel-bpe.json" || hdr.Workload.PromptLengths != "exact" {
		t.Errorf("workload %+v", hdr.Workload)
	}
	for _, r := range recs {
		if r.InputTokens != 24 {
			t.Errorf("request %d: %d input tokens by the local tokenizer, want 24", r.ID, r.InputTokens)
		}
	}
	t.Logf("summary:\n%s", out)
}
