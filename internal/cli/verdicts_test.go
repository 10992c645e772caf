package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/record"
	"servebench/sim"
)

// Two simulator configurations at ITL 10 ms and 20 ms, three short runs each, over real HTTP:
// compare calls the slower candidate regressed (exit 4) and, swapped, improved. The same
// files compared with themselves are never called changed.
func TestCompareSimulatorITL10vs20(t *testing.T) {
	t.Parallel()
	fixed := func(itl time.Duration) func(*sim.Config) {
		return func(c *sim.Config) { c.TTFT, c.ITL = 50*time.Millisecond, itl }
	}
	url10, url20 := startSim(t, fixed(10*time.Millisecond)), startSim(t, fixed(20*time.Millisecond))
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, r := range []struct{ url, out string }{{url10, "itl10.jsonl"}, {url20, "itl20.jsonl"}} {
		if code, _, errs := runMain(t, "run", "-q", "--url", r.url, "--input-tokens", "32", "--output-tokens", "16",
			"--requests", "8", "--concurrency", "4", "--warmup", "2", "--repeat", "3", "-o", p(r.out)); code != 0 {
			t.Fatalf("run %s: exit %d: %s", r.out, code, errs)
		}
	}
	// --expect-change sim: the simulator's own ITL setting is a recorded condition
	code, out, _ := runMain(t, "compare", p("itl10.jsonl"), p("itl20.jsonl"), "--expect-change", "sim")
	if code != exitcode.Regression || !strings.Contains(out, "REGRESSED") || !strings.Contains(out, "ITL p50") {
		t.Errorf("10 ms → 20 ms: exit %d, want %d:\n%s", code, exitcode.Regression, out)
	}
	code, out, _ = runMain(t, "compare", p("itl20.jsonl"), p("itl10.jsonl"), "--expect-change", "sim", "--threshold", "10")
	if code != exitcode.OK || !strings.Contains(out, "IMPROVED") {
		t.Errorf("20 ms → 10 ms: exit %d, want improved (0):\n%s", code, out)
	}
	if strings.Contains(out, "∞") || strings.Contains(out, "NaN") {
		t.Errorf("an interval is not a number:\n%s", out)
	}
	code, out, _ = runMain(t, "compare", p("itl10.jsonl"), p("itl10.jsonl"))
	if code == exitcode.Regression || strings.Contains(out, "IMPROVED") {
		t.Errorf("a file against itself: exit %d:\n%s", code, out)
	}
}

// A run held to a p99 TTFT rule with too few requests is INVALID (exit 7), says how many more
// it needs, and records the verdict in its run-end line; --repeat auto stops when the runs
// agree, and says so in the records.
func TestValidityAndRepeatAuto(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	out := filepath.Join(dir, "v.jsonl")
	code, stdout, errs := runMain(t, "run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "4",
		"--requests", "40", "--concurrency", "4", "--slo", "ttft=5s@p99", "-o", out)
	if code != exitcode.Invalid || !strings.Contains(stdout, "INVALID") || !strings.Contains(stdout, "p99 TTFT needs 419 more requests") {
		t.Fatalf("40 requests under a p99 rule: exit %d, want %d\n%s%s", code, exitcode.Invalid, stdout, errs)
	}
	h, _ := readRecords(t, out)
	if len(h.Ends) != 1 || h.Ends[0].Validity == nil || h.Ends[0].Validity.Verdict != record.Invalid {
		t.Errorf("run-end lines: %+v", h.Ends)
	}
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--valid", "nope", "-o", filepath.Join(dir, "x.jsonl")); code != exitcode.Usage {
		t.Errorf("--valid nope: exit %d: %s", code, errs)
	}

	out = filepath.Join(dir, "auto.jsonl")
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "8",
		"--requests", "16", "--concurrency", "4", "--repeat", "auto", "--repeat-max", "4", "--repeat-width", "0.5", "-o", out); code != 0 {
		t.Fatalf("--repeat auto: exit %d: %s", code, errs)
	}
	h, _ = readRecords(t, out)
	last := h.Ends[len(h.Ends)-1]
	if len(h.Ends) < 3 || len(h.Ends) > 4 || last.RepeatAuto == nil || last.RepeatAuto.Runs != len(h.Ends) {
		t.Errorf("--repeat auto, ±50%% target: %d runs, last %+v", len(h.Ends), last.RepeatAuto)
	}
	out = filepath.Join(dir, "cap.jsonl")
	code, stdout, _ = runMain(t, "run", "--url", url, "--input-tokens", "16", "--output-tokens", "8",
		"--requests", "8", "--concurrency", "4", "--repeat", "auto", "--repeat-max", "3", "--repeat-width", "0.000001", "-o", out)
	h, _ = readRecords(t, out)
	if code != 0 || len(h.Ends) != 3 || h.Ends[2].RepeatAuto == nil || h.Ends[2].RepeatAuto.Stop != "cap" || !strings.Contains(stdout, "--repeat auto stopped at its cap of 3 runs") {
		t.Errorf("--repeat auto at an unreachable target: exit %d, ends %+v\n%s", code, h.Ends, stdout)
	}
}
