package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/sim"
)

// TestBadValuesAreUsageErrors: every zero or negative value that means nothing, and every URL
// that cannot be a server's, is exit 2 with one line naming the flag, before any request
// reaches the server (a counting server stands where the benchmark would go).
func TestBadValuesAreUsageErrors(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "never.jsonl")
	for _, c := range []struct{ flag, value string }{
		{"--concurrency", "0"}, {"--rate", "0"}, {"--requests", "0"}, {"--warmup", "-3"},
		{"--request-timeout", "-1s"}, {"--idle-timeout", "-1s"}, {"--grace", "-1s"}, {"--num-prompts", "-1"},
		{"--requests", "-1"}, {"--duration", "-1s"}, {"--max-concurrency", "-1"}, {"--num-prompts", "0"},
		{"--repeat", "0"}, {"--duration", "0s"}, {"--ready-timeout", "0s"}, {"--input-tokens", "0"},
		{"--output-tokens", "-5"}, {"--max-errors", "-1"}, {"--rate", "-2"}, {"--burstiness", "0"},
		{"--fail-below", "1.5"}, {"--repeat-width", "0"}, {"--repeat-max", "0"}, {"--repeat-width", "NaN"},
	} {
		args := []string{"run", "-q", "--url", srv.URL, "-o", out, c.flag, c.value}
		if c.flag == "--fail-below" {
			args = append(args, "--slo", "ttft=1s")
		}
		code, _, errs := runMain(t, args...)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if code != exitcode.Usage || len(lines) != 1 || !strings.Contains(errs, c.flag) {
			t.Errorf("%s %s: exit %d, stderr %q; want exit 2 and one line naming the flag", c.flag, c.value, code, errs)
		}
	}
	for _, u := range []string{"ftp://127.0.0.1:18730", "ht!tp://:::", "http://", "127.0.0.1:8000", "http://127.0.0.1:99999"} {
		start := time.Now()
		code, _, errs := runMain(t, "run", "-q", "--url", u, "-o", out)
		if code != exitcode.Usage || !strings.Contains(errs, "--url") || time.Since(start) > 5*time.Second {
			t.Errorf("--url %s: exit %d after %v: %s", u, code, time.Since(start), errs)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run left a records file")
	}
	// where 0 does mean something, it is accepted: no warmup, no cap, no timeout
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = time.Millisecond, time.Millisecond })
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--warmup", "0", "--max-concurrency", "0", "--request-timeout", "0s",
		"--requests", "2", "--concurrency", "1", "--input-tokens", "8", "--output-tokens", "2", "-o", out); code != 0 {
		t.Errorf("zeros that mean something: exit %d: %s", code, errs)
	}
}

// TestOutputsLoseNothing: an existing records file is not replaced without --force, an
// output that is an input is refused and the input left byte-identical, and a write that
// fails is an error naming the path.
func TestOutputsLoseNothing(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = time.Millisecond, time.Millisecond })
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	small := []string{"run", "-q", "--url", url, "--requests", "3", "--concurrency", "1", "--input-tokens", "8", "--output-tokens", "2"}
	if code, _, errs := runMain(t, append(small, "-o", a)...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	before, _ := os.ReadFile(a)
	code, _, errs := runMain(t, append(small, "-o", a)...)
	if after, _ := os.ReadFile(a); code != exitcode.Usage || !bytes.Equal(before, after) || !strings.Contains(errs, "--force") {
		t.Errorf("run -o existing: exit %d (%s), file changed: %v", code, errs, !bytes.Equal(before, after))
	}
	if code, _, errs := runMain(t, append(small, "-o", a, "--force")...); code != 0 {
		t.Errorf("run -o existing --force: exit %d: %s", code, errs)
	}
	before, _ = os.ReadFile(a)
	for _, args := range [][]string{
		{"report", a, "-o", a},
		{"report", a, "-o", filepath.Join(dir, ".", "a.jsonl")},
		append(small, "--like", a, "-o", a, "--force"),
		append(small, "--prompts", a, "-o", a, "--force"),
		append(small, "--dataset", "sharegpt:"+a, "-o", a, "--force"),
		append(small, "-o", filepath.Join(dir, "b.jsonl"), "--json", filepath.Join(dir, "b.jsonl")),
	} {
		code, _, errs := runMain(t, args...)
		if after, _ := os.ReadFile(a); code != exitcode.Usage || !bytes.Equal(before, after) || !strings.Contains(errs, "input") {
			t.Errorf("%v: exit %d (%s), input changed: %v", args[:2], code, errs, !bytes.Equal(before, after))
		}
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		for _, args := range [][]string{append(small, "-o", "/dev/full"), append(small, "-o", filepath.Join(dir, "c.jsonl"), "--json", "/dev/full"),
			{"report", a, "-o", "/dev/full"}} {
			code, _, errs := runMain(t, args...)
			if code != exitcode.Error || !strings.Contains(errs, "/dev/full") {
				t.Errorf("%v -> /dev/full: exit %d: %s", args[:1], code, errs)
			}
		}
	}
	// an unwritable directory fails before any request is sent
	if code, _, errs := runMain(t, append(small, "-o", filepath.Join(dir, "no", "such", "dir.jsonl"))...); code != exitcode.Error || !strings.Contains(errs, "records file") {
		t.Errorf("unwritable -o: exit %d: %s", code, errs)
	}
}

// TestLikeChangesLoadShape: a closed-loop baseline replayed as an open loop for a duration
// runs, prints what changed (the users and request count it no longer has, the rate and
// duration it now has, the warmup derived anew), and compare calls the runs not comparable
// unless the load change is expected.
func TestLikeChangesLoadShape(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = time.Millisecond, time.Millisecond })
	dir := t.TempDir()
	closed, open := filepath.Join(dir, "closed.jsonl"), filepath.Join(dir, "open.jsonl")
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--requests", "6", "--input-tokens", "8", "--output-tokens", "2", "-o", closed); code != 0 {
		t.Fatalf("baseline: exit %d: %s", code, errs)
	}
	code, _, errs := runMain(t, "run", "--url", url, "--like", closed, "--rate", "5", "--duration", "1s", "-o", open)
	if code != 0 {
		t.Fatalf("--like --rate --duration: exit %d: %s", code, errs)
	}
	for _, want := range []string{"changed --rate: none → 5", "changed --duration: none → 1s", "changed --concurrency: 16 → none",
		"changed --requests: 6 → none", "changed --warmup: 32 → 5"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the changes lack %q:\n%s", want, errs)
		}
	}
	h, recs := readRecords(t, open)
	if h.Config["rate"] != 5.0 || h.Config["concurrency"] != nil || len(recs) == 0 || h.Like == nil || len(h.Like.Changes) < 4 {
		t.Errorf("open-loop replay: config %v, %d records, like %+v", h.Config, len(recs), h.Like)
	}
	if code, _, _ := runMain(t, "compare", closed, open); code != exitcode.NotComparable {
		t.Errorf("compare closed open: exit %d, want %d (not comparable)", code, exitcode.NotComparable)
	}
	if code, out, errs := runMain(t, "compare", closed, open, "--expect-change", "load"); code == exitcode.NotComparable || code == exitcode.Usage {
		t.Errorf("compare --expect-change load: exit %d: %s %s", code, out, errs)
	}
	// a --config file's keys are the user's settings too, and a setting left alone is the
	// baseline's: replaying with nothing changed lists no change
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte("output-tokens: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, errs = runMain(t, "run", "--url", url, "--like", closed, "--config", cfg, "-o", filepath.Join(dir, "cfg.jsonl"))
	if !strings.Contains(errs, "changed --output-tokens: 2 → 3") || strings.Contains(errs, "--concurrency") {
		t.Errorf("--config beside --like:\n%s", errs)
	}
	_, _, errs = runMain(t, "run", "--url", url, "--like", closed, "-o", filepath.Join(dir, "same.jsonl"))
	if strings.Contains(errs, "changed:") {
		t.Errorf("a plain replay lists changes:\n%s", errs)
	}
}

// TestWarmupAuto: --warmup auto against the simulator warms until its windows agree, records
// every warmup request, and says in the run-end line how many were needed and why it stopped.
//
// The simulator's ITL is 10 ms, not 1: the judge reads ITL p25, and on a loaded 2-core machine
// (two busy loops beside the suite) the scheduler moves 1 ms gaps by more than the tolerance,
// so a 1 ms simulator never looked steady (2,000 warmup requests, "max requests", 2 of 3 suites).
func TestWarmupAuto(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 10*time.Millisecond, 10*time.Millisecond })
	out := filepath.Join(t.TempDir(), "auto.jsonl")
	code, _, errs := runMain(t, "run", "--url", url, "--warmup", "auto", "--requests", "20", "--concurrency", "4",
		"--input-tokens", "16", "--output-tokens", "8", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, recs := readRecords(t, out)
	warm := 0
	for _, r := range recs {
		if r.Phase == "warmup" {
			warm++
		}
	}
	e := h.Ends[0]
	if e.WarmupStop != "converged" || e.WarmupRequests < 24 || warm < e.WarmupRequests || len(recs)-warm != 20 || !strings.Contains(errs, "--warmup auto:") {
		t.Errorf("run end %+v, %d warmup and %d other records: %s", e, warm, len(recs)-warm, errs)
	}
	if code, _, _ := runMain(t, "run", "--warmup", "sometimes"); code != exitcode.Usage {
		t.Errorf("--warmup sometimes: exit %d", code)
	}
	if code, _, _ := runMain(t, "run", "--warmup", "auto", "--warmup-max", "0"); code != exitcode.Usage {
		t.Errorf("--warmup-max 0: exit %d", code)
	}
}
