package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"servebench/exitcode"
	"servebench/record"
	"servebench/sim"
	"servebench/vtime"
)

// TestCompareRegressedAndImproved: compare of two files whose candidate's engine runs ITL
// twice as slow, three runs a side, calls the candidate regressed (exit 4, ITL p50 named)
// and, swapped, improved (exit 0), with no interval printed as ∞ or NaN; two files of the same
// engine under other seeds are neither. The files are virtual-time runs of the real load
// runner (writeVirtualRuns), so the verdict does not move with the machine's load: what this
// holds is compare's exit codes and text. The verdicts' rates are compare's own tests'
// (TestTraceVirtualTime's A/B ITL ×2 in virtual time, TestRecordedSets over recorded HTTP
// runs). Before, the files were 3+3 real-time runs over HTTP against two simulators.
func TestCompareRegressedAndImproved(t *testing.T) {
	t.Parallel()
	base := sim.DefaultConfig()
	slow := base
	slow.BWEfficiency /= 2 // decode is memory-bound: every step twice as long
	l := vtime.Load{Users: 4, Requests: 32, Warmup: 4, InputTokens: 128, OutputTokens: 16, InputJitter: 0.5, Noise: liveNoise}
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	writeVirtualRuns(t, p("base.jsonl"), base, l, []uint64{1, 2, 3}, nil)
	writeVirtualRuns(t, p("same.jsonl"), base, l, []uint64{4, 5, 6}, nil)
	writeVirtualRuns(t, p("slow.jsonl"), slow, l, []uint64{7, 8, 9}, nil)
	code, out, errs := runMain(t, "compare", p("base.jsonl"), p("slow.jsonl"))
	if code != exitcode.Regression || !strings.Contains(out, "REGRESSED") || !strings.Contains(out, "ITL p50") {
		t.Errorf("ITL ×2: exit %d, want %d:\n%s%s", code, exitcode.Regression, out, errs)
	}
	code, out, errs = runMain(t, "compare", p("slow.jsonl"), p("base.jsonl"), "--threshold", "10")
	if code != exitcode.OK || !strings.Contains(out, "IMPROVED") {
		t.Errorf("ITL ×½: exit %d, want improved (0):\n%s%s", code, out, errs)
	}
	if strings.Contains(out, "∞") || strings.Contains(out, "NaN") {
		t.Errorf("an interval is not a number:\n%s", out)
	}
	code, out, errs = runMain(t, "compare", p("base.jsonl"), p("same.jsonl"))
	if (code != exitcode.OK && code != exitcode.Inconclusive) || strings.Contains(out, "IMPROVED") || strings.Contains(out, "REGRESSED") {
		t.Errorf("one engine under other seeds: exit %d, want no change (0) or inconclusive (6):\n%s%s", code, out, errs)
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
