package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"servebench/exitcode"
	"servebench/internal/peertest"
	"servebench/sim"
)

// invocations runs `run --repeat 2`, then a 2-point sweep, then `run`, each a separate
// invocation with the default --seed, against url, and returns each measured run's cache
// share by invocation and run. extra goes to every invocation (--nonce off: the seed's text
// alone, what servebench sent before it drew a nonce).
func invocations(t *testing.T, url string, extra ...string) map[string]map[int]cachedShare {
	t.Helper()
	dir := t.TempDir()
	out := map[string]map[int]cachedShare{}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"repeat-2", []string{"run", "--repeat", "2", "--requests", "4", "--concurrency", "2"}},
		{"sweep", []string{"sweep", "--concurrency", "1,2", "--requests", "4"}},
		{"run", []string{"run", "--requests", "4", "--concurrency", "2"}},
	} {
		path := filepath.Join(dir, c.name+".jsonl")
		args := append(append(slices.Clone(c.args), "-q", "--url", url, "--input-tokens", "128", "--output-tokens", "4", "-o", path), extra...)
		code, _, errs := runMain(t, args...)
		if code != 0 && code != exitcode.Invalid {
			t.Fatalf("%s: exit %d: %s", c.name, code, errs)
		}
		_, recs := readRecords(t, path)
		out[c.name] = measuredCache(t, recs)
	}
	return out
}

// worstShare is the highest cache share of any measured run after the first invocation.
func worstShare(t *testing.T, got map[string]map[int]cachedShare) float64 {
	t.Helper()
	worst := 0.0
	for _, name := range []string{"repeat-2", "sweep", "run"} {
		for run, c := range got[name] {
			t.Logf("%-8s run %d: %5.1f%% of %5.0f prompt tokens from the cache", name, run, 100*c.share(), c.prompt)
			if name != "repeat-2" {
				worst = max(worst, c.share())
			}
		}
	}
	return worst
}

// checkInvocations holds the default to the rule (no measured run of a later invocation
// takes more than 5% of its prompt tokens from the cache) and shows the check can fail: with
// --nonce off the later invocations send the first one's text and are served from the cache.
func checkInvocations(t *testing.T, url func() string) {
	if w := worstShare(t, invocations(t, url())); w > 0.05 {
		t.Errorf("default seeds: a later invocation took %.1f%% of its prompt tokens from the cache", 100*w)
	}
	if w := worstShare(t, invocations(t, url(), "--nonce", "off")); w < 0.3 {
		t.Errorf("--nonce off: the later invocations took at most %.1f%% from the cache; the check above cannot fail", 100*w)
	}
}

// TestInvocationsFreshSimulator: against the simulator's prefix cache.
func TestInvocationsFreshSimulator(t *testing.T) {
	t.Parallel()
	checkInvocations(t, func() string { return startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 0, 0 }) })
}

// TestInvocationsFreshLlamaCpp: against the llama.cpp peer (mini.gguf, 4 slots), whose slots
// keep their last prompt and reuse its prefix (timings.cache_n). It runs beside other tests
// (it judges cache shares, not times), on a server of its own: another test's requests on the
// same slots could evict the prompts the --nonce off check must find. Both checks share it:
// the --nonce off check's first invocation fills the slots the later ones must find, whatever
// the default check sent before (a model load less than with a server each).
func TestInvocationsFreshLlamaCpp(t *testing.T) {
	t.Parallel()
	url := peertest.Llama(t, "mini.gguf", "-t", "1", "-np", "4", "-c", "8192")
	checkInvocations(t, func() string { return url })
}

// TestLikeNonce: --like replays the baseline's exact prompts (same hash, same recipe, its
// nonce recorded) unless given --nonce fresh, which sends text of its own at the baseline's
// lengths; compare calls both comparable; --nonce HEX rebuilds that invocation's text.
func TestLikeNonce(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 0, 0 })
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n+".jsonl") }
	common := []string{"-q", "--url", url, "--requests", "8", "--concurrency", "2", "--input-tokens", "32", "--output-tokens", "2", "--range-ratio", "0.5"}
	if code, _, errs := runMain(t, append([]string{"run", "-o", p("base")}, common...)...); code != 0 {
		t.Fatalf("base: exit %d: %s", code, errs)
	}
	// the replay is served from the cache the baseline filled: INVALID, and it says so
	code, stdout, errs := runMain(t, "run", "--url", url, "--like", p("base"), "-o", p("replay"))
	if code != exitcode.Invalid || !strings.Contains(stdout, "valid       INVALID: the server served") || !strings.Contains(stdout, "--nonce fresh") {
		t.Errorf("replay against the server that saw the baseline: exit %d, want %d, INVALID and --nonce fresh named: %s\n%s", code, exitcode.Invalid, errs, stdout)
	}
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--like", p("base"), "--nonce", "fresh", "-o", p("fresh")); code != 0 {
		t.Fatalf("--like --nonce fresh: exit %d: %s", code, errs)
	}
	bh, _ := readRecords(t, p("base"))
	rh, _ := readRecords(t, p("replay"))
	fh, frecs := readRecords(t, p("fresh"))
	if bh.Workload.Nonce == "" || rh.Workload.Nonce != bh.Workload.Nonce || rh.Workload.Hash != bh.Workload.Hash || string(rh.Workload.Recipe) != string(bh.Workload.Recipe) {
		t.Errorf("replay: nonce %q hash %s, baseline nonce %q hash %s: not the baseline's prompts", rh.Workload.Nonce, rh.Workload.Hash, bh.Workload.Nonce, bh.Workload.Hash)
	}
	if fh.Workload.Nonce == "" || fh.Workload.Nonce == bh.Workload.Nonce || fh.Workload.Hash == bh.Workload.Hash {
		t.Errorf("--nonce fresh: nonce %q hash %s, the baseline's %q %s", fh.Workload.Nonce, fh.Workload.Hash, bh.Workload.Nonce, bh.Workload.Hash)
	}
	if *fh.Workload.Lengths != *bh.Workload.Lengths {
		t.Errorf("--nonce fresh changed the lengths: %+v, baseline %+v", *fh.Workload.Lengths, *bh.Workload.Lengths)
	}
	if c := measuredCache(t, frecs)[0]; c.share() > 0.05 {
		t.Errorf("--like --nonce fresh: %.1f%% of prompt tokens from the cache", 100*c.share())
	}
	code, stdout, errs = runMain(t, "compare", p("base"), p("fresh"))
	if code == exitcode.NotComparable || strings.Contains(stdout, "not comparable") {
		t.Errorf("compare of a baseline and its --nonce fresh run: exit %d, not comparable:\n%s%s", code, stdout, errs)
	}
	// the recorded nonce, given back, rebuilds the baseline's text exactly
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--nonce", bh.Workload.Nonce, "-o", p("hex"),
		"--requests", "8", "--concurrency", "2", "--input-tokens", "32", "--output-tokens", "2", "--range-ratio", "0.5"); code != exitcode.Invalid {
		t.Errorf("--nonce %s, served from the cache: exit %d, want %d: %s", bh.Workload.Nonce, code, exitcode.Invalid, errs)
	}
	if hh, _ := readRecords(t, p("hex")); hh.Workload.Hash != bh.Workload.Hash {
		t.Errorf("--nonce %s: hash %s, the baseline's %s", bh.Workload.Nonce, hh.Workload.Hash, bh.Workload.Hash)
	}
	if code, _, errs := runMain(t, "run", "--nonce", "12345", "--requests", "1"); code != exitcode.Usage || !strings.Contains(errs, "--nonce") {
		t.Errorf("--nonce 12345: exit %d, want %d naming --nonce: %s", code, exitcode.Usage, errs)
	}
}

// TestInvalidSweepWithholds: a sweep whose points the warnings invalidate (the second of two
// identical sweeps with --nonce off, every point served from the first one's cache) prints
// no knee or peak as a conclusion, says why, records them withheld and exits 7; the first,
// like any sweep of prompts of its own, concludes and exits 0.
func TestInvalidSweepWithholds(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 0, 0 })
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"sweep", "--url", url, "--concurrency", "1,4", "--requests", "12", "--input-tokens", "128", "--output-tokens", "2",
			"--nonce", "off", "--slo", "ttft=1s", "-o", filepath.Join(dir, out)}
	}
	code, stdout, errs := runMain(t, args("a.jsonl")...)
	if code != 0 || !strings.Contains(stdout, "saturation knee: run") {
		t.Fatalf("first sweep: exit %d, want 0 with a knee: %s\n%s", code, errs, stdout)
	}
	code, stdout, errs = runMain(t, args("b.jsonl")...)
	if code != exitcode.Invalid {
		t.Errorf("second sweep: exit %d, want %d: %s", code, exitcode.Invalid, errs)
	}
	for _, bad := range []string{"saturation knee: run", "max goodput: run", "highest load meeting"} {
		if strings.Contains(stdout, bad) {
			t.Errorf("an INVALID sweep prints %q as a conclusion:\n%s", bad, stdout)
		}
	}
	if !strings.Contains(stdout, "INVALID sweep: 2 of 2 points INVALID") || !strings.Contains(stdout, "from its prefix cache") || !strings.Contains(stdout, "SLO load: withheld") {
		t.Errorf("no withheld conclusions with their reason:\n%s", stdout)
	}
	h, _ := readRecords(t, filepath.Join(dir, "b.jsonl"))
	e := h.SweepEnd
	if e == nil || e.Withheld == "" || e.Knee != nil || e.PeakThroughput != nil || e.SLOLoad != nil || e.MaxGoodput != nil || e.Points[0].Invalid == "" {
		t.Errorf("sweep-end line: %+v", e)
	}
	// report of the file prints what sweep printed
	code, rep, _ := runMain(t, "report", filepath.Join(dir, "b.jsonl"))
	if code != 0 || !strings.Contains(rep, "withheld") || strings.Contains(rep, "saturation knee: run") {
		t.Errorf("report of the INVALID sweep: exit %d\n%s", code, rep)
	}
}
