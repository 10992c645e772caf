package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/metrics"
	"servebench/record"
	"servebench/sim"
	"servebench/sim/simtest"
)

// runMain runs servebench in-process and returns its exit code and output.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// startSim starts a simulator with fixed latencies on a free loopback port.
func startSim(t *testing.T, mod func(*sim.Config)) string {
	t.Helper()
	_, url := startSimServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL = 20*time.Millisecond, 2*time.Millisecond
		if mod != nil {
			mod(c)
		}
	})
	return url
}

// startSimServer starts a simulator configured by mod (from sim.DefaultConfig) and returns
// it with its URL.
func startSimServer(t *testing.T, mod func(*sim.Config)) (*sim.Server, string) {
	t.Helper()
	c := sim.DefaultConfig()
	mod(&c)
	return simtest.Start(t, c)
}

// buildNotice is the progress line of a workload that takes more than 5 s to build.
var buildNotice = regexp.MustCompile(`(?m)^building the workload: \S+ so far \(Ctrl-C stops\)\n`)

// withoutBuildNotice is stderr without the build's progress lines, trimmed: on a busy machine
// (tests run side by side) a workload built before a bad input is found can take more than
// 5 s, and its progress line is not part of the one-line error the checks hold.
func withoutBuildNotice(stderr string) string {
	return strings.TrimSpace(buildNotice.ReplaceAllString(stderr, ""))
}

// logQuality logs the client's own health in each run of h (its run-end lines): what to
// look at when a timing check fails on a busy machine.
func logQuality(t *testing.T, h *record.Header) {
	t.Helper()
	for _, e := range h.Ends {
		if q := e.Quality; q != nil {
			t.Logf("run %d: client scheduling latency p50 %.2f p99 %.2f ms, CPU mean %.2f max %.2f; events stamped %d (%d at the read), requests sent %d (%d at the write hook)",
				e.Run, q.SchedP50/1e6, q.SchedP99/1e6, q.CPUMean, q.CPUMax, q.Stamps, q.ReadStamps, q.Sends, q.WriteSends)
		}
	}
}

// readRecords reads a records file whole.
func readRecords(t *testing.T, path string) (*record.Header, []record.Record) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, recs, err := record.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return h, recs
}

func TestRunAgainstSimulatorAndReportMatches(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	recs, js := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.json")
	code, out, errs := runMain(t, "run", "--url", url, "--input-tokens", "64", "--output-tokens", "16",
		"--requests", "30", "--concurrency", "4", "-o", recs, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"SIMULATED", "30 completed", "TTFT", "ITL (chunk)", "8 warmup discarded"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	hdr, rs := readRecords(t, recs)
	if !hdr.Target.Simulated || hdr.Workload.PromptLengths != "exact" || !strings.HasPrefix(hdr.Workload.Hash, "sha256:") {
		t.Errorf("header %+v", hdr)
	}
	if len(rs) != 38 {
		t.Fatalf("%d records, want 30 + 8 warmup", len(rs))
	}
	for _, r := range rs {
		if !r.OK() || r.OutputTokens != 16 || r.PromptTokens != 64 || len(r.Events) != 16 {
			t.Fatalf("record %+v", r)
		}
		// against the simulator, usage on every chunk is asked for: exact per-event counts
		for _, e := range r.Events {
			if e.N != 1 {
				t.Fatalf("record %d: event token count %d, want 1 (continuous usage stats)", r.ID, e.N)
			}
		}
	}
	// the same summary again from the records alone
	code, again, errs := runMain(t, "report", recs)
	if code != 0 || again != out {
		t.Errorf("report (exit %d, %s) differs from run's summary:\n--- run\n%s--- report\n%s", code, errs, out, again)
	}
	var sum map[string]any
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &sum); err != nil || sum["completed"] != 30.0 || sum["simulated"] != true {
		t.Errorf("--json: %v %v", err, string(b))
	}
	// fixed sim latencies: TTFT near 20 ms, never under it; a busy machine (load average 10
	// on 2 cores) delays the in-process simulator by tens of ms, a wrong clock by far more
	if v, _ := sum["median_ttft_ms"].(float64); v < 19 || v > 250 {
		t.Errorf("median TTFT %.2f ms with a fixed 20 ms", v)
	}
}

func TestWorkloadHashAndReplay(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	run := func(name string, extra ...string) *record.Header {
		p := filepath.Join(dir, name)
		args := append([]string{"run", "-q", "--url", url, "--input-tokens", "32", "--output-tokens", "4", "--requests", "5", "--concurrency", "1", "-o", p}, extra...)
		// a run that sends text the server saw is INVALID (exit 7) by the cache note
		if code, _, errs := runMain(t, args...); code != 0 && code != exitcode.Invalid {
			t.Fatalf("%v: exit %d: %s", extra, code, errs)
		}
		h, _ := readRecords(t, p)
		return h
	}
	saved := filepath.Join(dir, "w.jsonl")
	a := run("a.jsonl", "--save-workload", saved)
	b := run("b.jsonl")
	c := run("c.jsonl", "--seed", "2")
	d := run("d.jsonl", "--prompts", saved)
	e := run("e.jsonl", "--nonce", a.Workload.Nonce)
	if a.Workload.Hash == b.Workload.Hash || a.Workload.Nonce == b.Workload.Nonce {
		t.Error("two invocations with the same flags and seed sent the same text (no nonce of their own)")
	}
	if a.Workload.Hash != e.Workload.Hash {
		t.Error("the same flags, seed and nonce gave different workload hashes")
	}
	if a.Workload.Hash == c.Workload.Hash {
		t.Error("a different seed gave the same workload hash")
	}
	if d.Workload.Count != a.Workload.Count {
		t.Errorf("replayed workload has %d requests, saved %d", d.Workload.Count, a.Workload.Count)
	}
}

func TestConfigFileAndFlagOverride(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("url: "+url+"\ninput-tokens: 16\noutput-tokens: 3\nrequests: 4\nconcurrency: 2\nrequest-timeout: 30s\n"), 0o644)
	p := filepath.Join(dir, "r.jsonl")
	if code, _, errs := runMain(t, "run", "-q", "--config", cfg, "--output-tokens", "5", "-o", p); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, rs := readRecords(t, p)
	if h.Config["output_tokens"] != 5.0 || h.Config["input_tokens"] != 16.0 || h.Config["request_timeout"] != float64(30*time.Second) {
		t.Errorf("effective config %v", h.Config)
	}
	if len(rs) != 8 || rs[0].MaxTokens != 5 { // 4 measured + the default warmup of two per user
		t.Errorf("%d records, max_tokens %d", len(rs), rs[0].MaxTokens)
	}
	os.WriteFile(cfg, []byte("input-tokns: 16\n"), 0o644)
	if code, _, errs := runMain(t, "run", "--config", cfg); code != exitcode.Usage || !strings.Contains(errs, "input-tokns") {
		t.Errorf("a misspelt config key: exit %d, %q", code, errs)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"prompt\":\"a\"}\n{oops\n"), 0o644)
	small := filepath.Join(dir, "small.json")
	writeShareGPT(t, small, 12)
	url := startSim(t, nil)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown flag", []string{"run", "--no-such-flag"}, exitcode.Usage, "unknown flag: --no-such-flag"},
		{"misspelt flag", []string{"run", "--concurency", "3"}, exitcode.Usage, "did you mean --concurrency?"},
		{"url without scheme", []string{"run", "--url", "127.0.0.1:8000"}, exitcode.Usage, "write http://127.0.0.1:8000"},
		{"compare of one file", []string{"compare", "baseline.jsonl"}, exitcode.Usage, "compare takes two records files"},
		{"sharegpt too small", []string{"run", "--url", url, "--dataset", "sharegpt:" + small, "--requests", "10", "-o", filepath.Join(dir, "s.jsonl")}, exitcode.Usage, "10 measured (--requests) + 32 warmup requests"},
		{"bad api", []string{"run", "--api", "grpc"}, exitcode.Usage, `--api "grpc"`},
		{"rate and concurrency", []string{"run", "--rate", "2", "--concurrency", "3"}, exitcode.Usage, "exclude each other"},
		{"bad extra body", []string{"run", "--extra-body", "[1]"}, exitcode.Usage, "--extra-body"},
		{"unreachable", []string{"run", "--url", "http://127.0.0.1:1", "--ready-timeout", "300ms", "-o", filepath.Join(dir, "u.jsonl")}, exitcode.Error, "http://127.0.0.1:1"},
		{"unwritable output", []string{"run", "--url", "http://127.0.0.1:1", "-o", filepath.Join(dir, "no", "such", "dir", "r.jsonl")}, exitcode.Error, "records file"},
		{"malformed prompts", []string{"run", "--url", url, "--prompts", bad, "-o", filepath.Join(dir, "p.jsonl")}, exitcode.Usage, "bad.jsonl:2"},
		{"report of a missing file", []string{"report", filepath.Join(dir, "missing.jsonl")}, exitcode.Error, "missing.jsonl"},
		{"report of a non-records file", []string{"report", bad}, exitcode.Error, "not a servebench records file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, _, errs := runMain(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, tc.code, tc.want)
			}
			if lines := strings.Count(strings.TrimSpace(errs), "\n"); lines > 0 {
				t.Errorf("error is %d lines, want one: %q", lines+1, errs)
			}
			if time.Since(start) > 20*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
}

func TestSecretsNeverWritten(t *testing.T) {
	t.Parallel()
	const key = "sk-test-SECRET-4242"
	url := startSim(t, nil)
	dir := t.TempDir()
	p, js := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.json")
	code, out, errs := runMain(t, "run", "--url", url, "--api-key", key, "--header", "X-Api-Token="+key,
		"--input-tokens", "8", "--output-tokens", "2", "--requests", "3", "--concurrency", "1", "-o", p, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, rout, _ := runMain(t, "report", p, "--format", "json")
	// a failing run too: the key must not leak into error messages
	_, _, errs2 := runMain(t, "run", "--url", "http://127.0.0.1:1", "--api-key", key, "--ready-timeout", "200ms", "-o", filepath.Join(dir, "x.jsonl"))
	recs, _ := os.ReadFile(p)
	jb, _ := os.ReadFile(js)
	for name, s := range map[string]string{"stdout": out, "stderr": errs, "records": string(recs), "json": string(jb), "report": rout, "error": errs2} {
		if strings.Contains(s, key) {
			t.Errorf("the API key appears in %s", name)
		}
	}
	if !strings.Contains(string(recs), "REDACTED") {
		t.Error("the command line in the header was not redacted")
	}
}

func TestReportSkipsBadLines(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	p := filepath.Join(t.TempDir(), "r.jsonl")
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--input-tokens", "8", "--output-tokens", "2", "--requests", "4", "--concurrency", "1", "-o", p); code != 0 {
		t.Fatal(errs)
	}
	b, _ := os.ReadFile(p)
	lines := strings.SplitAfter(string(b), "\n")
	lines[3] = "{corrupt\n"
	cut := strings.Join(lines, "")
	cut = cut[:len(cut)-30] // and an interrupted last line
	os.WriteFile(p, []byte(cut), 0o644)
	code, out, errs := runMain(t, "report", p)
	if code != 0 || !strings.Contains(errs, "line 4") || !strings.Contains(out, "completed") {
		t.Errorf("exit %d\nstderr %s\nstdout %s", code, errs, out)
	}
}

// TestExitCodesDoNotGuessFromMessages checks that a tool error whose message happens to
// contain words of cobra's usage errors ("accepts", "invalid argument") stays exit 1.
func TestExitCodesDoNotGuessFromMessages(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "accepts invalid argument")
	if code, _, e := runMain(t, "report", filepath.Join(dir, "x.jsonl")); code != exitcode.Error {
		t.Errorf("missing file in a folder named like a usage error: exit %d (%s), want %d", code, e, exitcode.Error)
	}
	for _, args := range [][]string{{"report"}, {"compare", "a"}, {"frob"}, {"run", "--nope"}, {"run", "--requests", "x"}} {
		if code, _, e := runMain(t, args...); code != exitcode.Usage {
			t.Errorf("%v: exit %d (%s), want %d", args, code, e, exitcode.Usage)
		}
	}
}

// TestReportExplain: report --explain ends the text with the steady check's trace, and
// without it the text names the policy's version only.
func TestReportExplain(t *testing.T) {
	t.Parallel()
	recs := filepath.Join("..", "..", "report", "testdata", "base.jsonl")
	code, out, errs := runMain(t, "report", recs, "--explain")
	if code != 0 || !strings.Contains(out, "why steady: the rules of policy "+metrics.SteadyPolicy.Version) || !strings.Contains(out, "too-few-requests") {
		t.Fatalf("report --explain: exit %d\n%s\n%s", code, out, errs)
	}
	if _, plain, _ := runMain(t, "report", recs); strings.Contains(plain, "why steady") || !strings.Contains(plain, "[policy "+metrics.SteadyPolicy.Version+"]") {
		t.Errorf("report without --explain:\n%s", plain)
	}
}
