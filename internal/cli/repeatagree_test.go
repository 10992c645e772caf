package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/sim"
)

// TestRepeatDisagreementSaidFirst: `run --repeat 3` against a simulator that throttles every
// step 3× from 0.9 s after its first on (run 1, about 0.65 s, before it; run 3 after it, as
// a machine that turned busy partway) says the runs disagree before the run table, names
// the later runs as the slow ones (a load beside them, or the server slowing), puts the
// disagreement first among the notes, and reads "quality fair"; the note every run gave is
// said once, with "(runs 1–3)". Before, the terminal read "quality good" with the last
// run's notes only.
func TestRepeatDisagreementSaidFirst(t *testing.T) {
	url := startSimURL(t, func(c *sim.Config) { c.ThrottleAfter, c.ThrottleFactor = 900*time.Millisecond, 3 })
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errs := runMain(t, "run", "-q", "--url", url, "--repeat", "3", "--concurrency", "2",
		"--requests", "24", "--input-tokens", "16", "--output-tokens", "8", "-o", p)
	h, _ := readRecords(t, p)
	logQuality(t, h)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	agree := strings.Index(out, "agreement   DISAGREE beyond their own noise: E2E p50 ")
	table := strings.Index(out, "  run  label")
	if agree < 0 || table < 0 || agree > table {
		t.Fatalf("no disagreement line before the run table:\n%s", out)
	}
	_, notes, _ := strings.Cut(out, "\nnotes\n")
	for _, want := range []string{"  [1] may distort: the 3 runs disagree beyond their own noise: E2E p50 ", "slower than ", "another load", "or the server slowed (throttling",
		"built-in simulator: these are not a real server's figures (runs 1–3)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if !strings.Contains(out, "quality     fair: ") {
		t.Errorf("quality not fair:\n%s", out)
	}
	// report of the file says the same
	code, rep, errs := runMain(t, "report", p)
	if code != 0 || !strings.Contains(rep, "agreement   DISAGREE") || !strings.Contains(rep, "[1] may distort: the 3 runs disagree") {
		t.Errorf("report: exit %d %s\n%s", code, errs, rep)
	}
}
