package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"servebench/internal/peertest"
	"servebench/sim"
)

// reuseRuns runs --reuse 0%, 50% and 90% against url, n requests each, and checks that each
// is stated within 5 points of the share set.
func reuseRuns(t *testing.T, url, n string, extra ...string) {
	dir := t.TempDir()
	for _, share := range []string{"0%", "50%", "90%"} {
		args := append([]string{"run", "--url", url, "--reuse", share, "--input-tokens", "256", "--output-tokens", "4",
			"--requests", n, "-o", filepath.Join(dir, strings.TrimSuffix(share, "%")+".jsonl")}, extra...)
		code, out, errs := runMain(t, args...)
		want := "--reuse " + share + ": the workload repeats"
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "within 5 points, as set") {
			t.Errorf("--reuse %s: exit %d; want 0 and the reuse stated within 5 points\n%s%s", share, code, out, errs)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, want) {
				t.Log(strings.TrimSpace(l))
			}
		}
	}
}

// TestReuseSetting: --reuse 0%, 50% and 90% against the simulator's prefix cache are each
// stated within 5 points; a simulator whose cache is too small for the prefixes in flight
// serves less, and the run says the server moved.
func TestReuseSetting(t *testing.T) {
	t.Parallel()
	// the engine model, with its prefix cache; one user, so that no two requests of a prefix
	// group are in flight before the first is cached: at 4 users beside two busy loops the
	// engine prefilled a group's requests together and served 83.1% of a 90% set (a true
	// finding, "the server moved", but one a busy machine makes, not the setting)
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 0, 0 })
	reuseRuns(t, url, "40", "--concurrency", "1")

	small := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL, c.KVCacheTokens = 0, 0, 1100 })
	code, out, errs := runMain(t, "run", "--url", small, "--reuse", "50%", "--prefix-groups", "8", "--input-tokens", "256",
		"--output-tokens", "4", "--requests", "40", "--concurrency", "4", "-o", filepath.Join(t.TempDir(), "small.jsonl"))
	if code != 0 || !strings.Contains(out, "the server moved: it served") || !strings.Contains(out, "points less than the workload repeats") {
		t.Errorf("a cache too small for 8 prefixes: exit %d; want the server named as the side that moved\n%s%s", code, out, errs)
	}
}

// TestReuseSettingLlamaCpp is TestReuseSetting's three shares against llama.cpp, one request
// at a time: requests sent together all miss a prefix none of them has computed yet, which
// a share laid out by design does not count (at 90% and 4 at once: 7 points less).
func TestReuseSettingLlamaCpp(t *testing.T) {
	t.Parallel()
	url := peertest.Llama(t, "mini.gguf", "-t", "1", "-np", "4", "-c", "8192")
	reuseRuns(t, url, "20", "--api", "openai-completions", "--concurrency", "1", "--warmup", "1")
}

// TestReuseUsage: --reuse with a workload that has its own reuse, or a share no prefix can
// give, is a usage error.
func TestReuseUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--reuse", "50%", "--turns", "3"},
		{"--reuse", "50%", "--prefix-tokens", "10", "--prefix-groups", "1"},
		{"--reuse", "99%", "--input-tokens", "64"},
		{"--reuse", "150%"},
	} {
		code, _, errs := runMain(t, append([]string{"run", "--url", "http://127.0.0.1:1"}, args...)...)
		if code != 2 || !strings.Contains(errs, "--reuse") {
			t.Errorf("%v: exit %d %q, want 2 naming --reuse", args, code, errs)
		}
	}
}
