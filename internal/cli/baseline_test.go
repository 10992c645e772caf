package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/conditions"
	"servebench/exitcode"
	"servebench/record"
	"servebench/runspec"
	"servebench/sim"
)

// TestBaselineCompareSimulator is the baseline-to-compare wiring against the simulator in
// fixed mode: a --repeat 2 baseline embeds its workload's recipe; --like of it against a
// simulator of another ITL is compared, naming the simulator's setting (sim.itl, a recorded
// condition) among what differs; a different --output-tokens is "not comparable" naming that
// condition and the deliberate change (exit 5), and with --expect-change the same pair is
// compared; the gobench format has a line per run. Which verdict a comparison reaches is
// TestCompareRegressedAndImproved's (virtual-time files, exit 4, 0 and no change), not this
// test's: its runs are short real-time runs, which a busy machine moves. Before, it held the
// verdicts of 3+3 real runs (ITL 20 vs 25 ms regressed, the same configuration twice not
// changed), serially.
func TestBaselineCompareSimulator(t *testing.T) {
	t.Parallel()
	fixed := func(itl time.Duration) func(*sim.Config) {
		return func(c *sim.Config) { c.TTFT, c.ITL = 20*time.Millisecond, itl }
	}
	url20, url25 := startSim(t, fixed(20*time.Millisecond)), startSim(t, fixed(25*time.Millisecond))
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	run := func(args ...string) {
		t.Helper()
		if code, _, errs := runMain(t, append([]string{"run", "-q"}, args...)...); code != 0 {
			t.Fatalf("run %v: exit %d: %s", args, code, errs)
		}
	}
	run("--url", url20, "--input-tokens", "32", "--output-tokens", "8", "--requests", "8", "--concurrency", "4",
		"--warmup", "1", "--repeat", "2", "-o", p("base.jsonl"))
	hdr, recs := readRecords(t, p("base.jsonl"))
	runs := map[int]bool{}
	for _, r := range recs {
		runs[r.Run] = true
	}
	if len(runs) != 2 || len(hdr.Workload.Recipe) == 0 {
		t.Fatalf("base: runs %v, embedded workload recipe %d bytes", runs, len(hdr.Workload.Recipe))
	}
	run("--like", p("base.jsonl"), "--url", url25, "-o", p("slow.jsonl"))
	run("--like", p("base.jsonl"), "--url", url20, "--output-tokens", "6", "--repeat", "1", "-o", p("short.jsonl"))
	h, _ := readRecords(t, p("short.jsonl"))
	if h.Like == nil || len(h.Like.Changes) != 2 || h.Like.Changes[0].Key != "output-tokens" {
		t.Errorf("deliberate changes: %+v", h.Like)
	}
	compared := func(code int) bool {
		return code == exitcode.OK || code == exitcode.Regression || code == exitcode.Inconclusive || code == exitcode.Provisional
	}
	for _, tc := range []struct {
		args []string
		code int // -1: compared, whatever the verdict
		want []string
	}{
		{[]string{p("base.jsonl"), p("slow.jsonl")}, -1, []string{"n=2", "ITL p50", "sim.itl", "\nverdict     "}},
		{[]string{p("base.jsonl"), p("short.jsonl")}, exitcode.NotComparable, []string{"NOT COMPARABLE", "workload.output_tokens", "deliberate changes", "--output-tokens 8 → 6"}},
		{[]string{p("base.jsonl"), p("short.jsonl"), "--expect-change", "output_tokens"}, -1, []string{"expected change", "other side's runs alone", "\nverdict     "}},
	} {
		code, out, errs := runMain(t, append([]string{"compare"}, tc.args...)...)
		if tc.code == -1 && (!compared(code) || strings.Contains(out, "NOT COMPARABLE")) || tc.code >= 0 && code != tc.code {
			t.Errorf("compare %v: exit %d, want %d (-1: a comparison)\n%s%s", tc.args[1:], code, tc.code, out, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("compare %v: output lacks %q:\n%s", tc.args[1:], w, out)
			}
		}
	}
	code, out, _ := runMain(t, "report", p("base.jsonl"), "--format", "gobench")
	if code != 0 || strings.Count(out, "BenchmarkServe/") != 2 {
		t.Errorf("gobench: exit %d:\n%s", code, out)
	}
}

// TestEnvSimulator checks env against a live simulator: detected, declared and unknown.
func TestEnvSimulator(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	code, out, errs := runMain(t, "env", "--url", url, "--condition", "gpu.driver=none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"server.family", "servebench-sim", "gpu.driver", "declared", "client.cores", "unknown"} {
		if !strings.Contains(out, w) {
			t.Errorf("env output lacks %q:\n%s", w, out)
		}
	}
	if code, _, e := runMain(t, "env", "--url", "http://127.0.0.1:1", "--ready-timeout", "300ms"); code != exitcode.Error || !strings.Contains(e, "http://127.0.0.1:1") {
		t.Errorf("env against nothing: exit %d: %s", code, e)
	}
	if code, _, _ := runMain(t, "env", "--condition", "novalue"); code != exitcode.Usage {
		t.Errorf("--condition without = : exit %d, want %d", code, exitcode.Usage)
	}
}

// --embed-prompts=false keeps the prompts out of the records; --like of such a file rebuilds
// the same workload from its settings (same hash, so it stays comparable, also when the number
// of requests changes beside it) and keeps them out too. A --config file's keys override the
// baseline like flags do.
func TestEmbedPromptsOff(t *testing.T) {
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = time.Millisecond, time.Millisecond })
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	run := func(args ...string) (*record.Header, string) {
		t.Helper()
		code, _, errs := runMain(t, append([]string{"run", "-q", "--url", url}, args...)...)
		if code != 0 {
			t.Fatalf("run %v: exit %d: %s", args, code, errs)
		}
		h, _ := readRecords(t, args[len(args)-1])
		return h, errs
	}
	bh, _ := run("--input-tokens", "16", "--output-tokens", "4", "--requests", "4", "--concurrency", "2", "--embed-prompts=false", "-o", p("base.jsonl"))
	if len(bh.Workload.Requests)+len(bh.Workload.Recipe) != 0 || bh.Config["embed_prompts"] != false {
		t.Fatalf("prompts embedded (%d bytes) or not recorded as off (%v)", len(bh.Workload.Requests), bh.Config["embed_prompts"])
	}
	ch, errs := run("--like", p("base.jsonl"), "--requests", "6", "-o", p("cand.jsonl"))
	if ch.Workload.Hash != bh.Workload.Hash || ch.Workload.Count != bh.Workload.Count || strings.Contains(errs, "differs") {
		t.Errorf("rebuilt workload %s (%d prompts), baseline %s (%d) (%s)", ch.Workload.Hash, ch.Workload.Count, bh.Workload.Hash, bh.Workload.Count, errs)
	}
	if len(ch.Workload.Requests)+len(ch.Workload.Recipe) != 0 {
		t.Errorf("the replay embedded the prompts the baseline kept out")
	}

	// a --config file's embed-prompts: false holds under --like of an embedded baseline
	run("--input-tokens", "16", "--output-tokens", "4", "--requests", "4", "--concurrency", "2", "-o", p("emb.jsonl"))
	cfgFile := p("private.yaml")
	if err := os.WriteFile(cfgFile, []byte("embed-prompts: false\ncache-salt: per-run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yh, _ := run("--config", cfgFile, "--like", p("emb.jsonl"), "-o", p("yaml.jsonl"))
	if len(yh.Workload.Requests)+len(yh.Workload.Recipe) != 0 || yh.Config["cache_salt"] != "per-run" {
		t.Errorf("--config under --like: %d bytes of prompts embedded, cache_salt %v", len(yh.Workload.Requests), yh.Config["cache_salt"])
	}

	// a prompts file the baseline named by a relative path, from another directory
	prompts := p("p.jsonl")
	if err := os.WriteFile(prompts, []byte(`{"prompt": "one two three"}`+"\n"+`{"prompt": "four five"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	run("--prompts", "p.jsonl", "--output-tokens", "4", "--requests", "2", "--concurrency", "1", "--embed-prompts=false", "-o", p("pf.jsonl"))
	t.Chdir(t.TempDir())
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--like", p("pf.jsonl"), "-o", p("pf2.jsonl"))
	if code != exitcode.Usage || !strings.Contains(errs, "kept its prompts out of the records") || !strings.Contains(errs, "give --prompts PATH") {
		t.Errorf("--like of a baseline whose prompts file is not found here: exit %d: %s", code, errs)
	}
	fh, _ := run("--like", p("pf.jsonl"), "--prompts", prompts, "-o", p("pf3.jsonl"))
	if fh.Workload.Source != "p.jsonl" {
		t.Errorf("source %q, want the file name p.jsonl wherever it was found", fh.Workload.Source)
	}
}

// --cache-salt per-run gives every run its own random cache_salt, beside the user's extra
// body; the simulator accepts it, and the setting is a recorded condition.
func TestCacheSaltPerRun(t *testing.T) {
	t.Parallel()
	c := runspec.Default()
	c.CacheSalt, c.ExtraBody = "per-run", `{"priority": 1}`
	a, err := c.RunSampling()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.RunSampling()
	sa, _ := a.ExtraBody["cache_salt"].(string)
	sb, _ := b.ExtraBody["cache_salt"].(string)
	if !strings.HasPrefix(sa, "servebench-") || sa == sb || a.ExtraBody["priority"] != 1.0 {
		t.Errorf("salts %q and %q, extra body %v: want two different servebench- salts beside priority", sa, sb, a.ExtraBody)
	}
	if s, _ := c.Sampling(); s.ExtraBody["cache_salt"] != nil {
		t.Error("the workload's sampling (hashed) carries the salt")
	}
	c.ExtraBody = `{"cache_salt": "mine"}`
	if _, err := c.RunSampling(); err == nil {
		t.Error("--cache-salt per-run beside a cache_salt in --extra-body was accepted")
	}

	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = time.Millisecond, time.Millisecond })
	out := filepath.Join(t.TempDir(), "salted.jsonl")
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "4",
		"--requests", "4", "--concurrency", "2", "--repeat", "2", "--cache-salt", "per-run", "-o", out); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	hdr, recs := readRecords(t, out)
	if len(recs) != 2*(4+4) { // the default warmup: two per user
		t.Errorf("%d records, want 16", len(recs))
	}
	if v, _ := conditions.Set(hdr.Conditions).Get("sampling.cache_salt"); v.Value != "per-run" {
		t.Errorf("condition sampling.cache_salt = %q, want per-run", v.Value)
	}
	if code, _, _ := runMain(t, "run", "--cache-salt", "always"); code != exitcode.Usage {
		t.Errorf("--cache-salt always: exit %d, want %d", code, exitcode.Usage)
	}
	if code, _, errs := runMain(t, "run", "--cache-salt", "per-run", "--api", "ollama"); code != exitcode.Usage || !strings.Contains(errs, "OpenAI-compatible") {
		t.Errorf("--cache-salt per-run with Ollama: exit %d (%s), want a usage error", code, errs)
	}
}
