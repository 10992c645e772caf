package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/sim"
	"servebench/vtime"
)

// compare never passes a side that measured nothing: over real HTTP, a candidate whose every
// request failed and one whose every request was warmup are "MEASURED NOTHING" with exit 8,
// never "no significant change"; the base compared with itself is a usage error.
func TestCompareMeasuredNothing(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 20*time.Millisecond, 5*time.Millisecond })
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	args := []string{"run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "8", "--requests", "12", "--concurrency", "4", "--warmup", "2"}
	if code, _, errs := runMain(t, append(args, "-o", p("base.jsonl"))...); code != 0 {
		t.Fatalf("base run: exit %d: %s", code, errs)
	}
	// every request fails: run exits 1 and still writes its records
	if code, _, errs := runMain(t, append(args, "--header", "X-Sim-Fault=http_500", "-o", p("fail.jsonl"))...); code != exitcode.Error {
		t.Fatalf("all-failing run: exit %d, want %d: %s", code, exitcode.Error, errs)
	}
	// the same base run with every record marked warmup: a run that measured nothing warm
	warm := strings.ReplaceAll(readFile(t, p("base.jsonl")), `"phase":"measure"`, `"phase":"warmup"`)
	if err := os.WriteFile(p("warm.jsonl"), []byte(warm), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cand := range []string{"fail.jsonl", "warm.jsonl"} {
		code, out, errs := runMain(t, "compare", p("base.jsonl"), p(cand))
		if code != exitcode.Nothing || !strings.Contains(out, "MEASURED NOTHING: the candidate has no completed measured request") ||
			strings.Contains(out, "NO SIGNIFICANT CHANGE") {
			t.Errorf("base vs %s: exit %d, want %d:\n%s%s", cand, code, exitcode.Nothing, out, errs)
		}
		code, out, _ = runMain(t, "compare", p(cand), p("base.jsonl"), "--format", "json")
		if code != exitcode.Nothing || !strings.Contains(out, `"measured_nothing": "base"`) || !strings.Contains(out, `"exit_code": 8`) {
			t.Errorf("%s vs base, json: exit %d:\n%s", cand, code, out)
		}
	}
	// a file compared with itself, by one path or by a copy, is a usage error that says so,
	// never a verdict (the resampling's noise called "inconclusive")
	if err := os.WriteFile(p("copy.jsonl"), []byte(readFile(t, p("base.jsonl"))), 0o644); err != nil {
		t.Fatal(err)
	}
	for cand, want := range map[string]string{"base.jsonl": "are the same file", "copy.jsonl": "hold identical records"} {
		code, out, errs := runMain(t, "compare", p("base.jsonl"), p(cand))
		if code != exitcode.Usage || !strings.Contains(errs, want) || !strings.Contains(errs, "no change by construction") || out != "" {
			t.Errorf("base vs %s: exit %d, want %d and %q:\n%s%s", cand, code, exitcode.Usage, want, out, errs)
		}
	}
}

// A candidate whose requests all missed the SLO has goodput 0, and that 0 is in its goodput
// figure (an arithmetic mean), not dropped: compare calls goodput regressed. The two sides are
// virtual-time runs (writeVirtualRuns), two a side, of an engine and of one ten times slower,
// under an E2E SLO at twice the fast side's slowest request: the slow side meets it never,
// the fast side always, whatever the machine's load. Before, they were 2+2 real-time runs
// over HTTP, serial (beside neighbours the fast side's goodputs spread too far to judge).
func TestCompareZeroGoodputStaysIn(t *testing.T) {
	t.Parallel()
	fast := sim.DefaultConfig()
	slow := fast
	slow.BWEfficiency /= 10
	l := vtime.Load{Users: 4, Requests: 12, Warmup: 2, InputTokens: 16, OutputTokens: 8}
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	seeds := []uint64{1, 2}
	writeVirtualRuns(t, p("probe.jsonl"), fast, l, seeds, nil)
	_, recs := readRecords(t, p("probe.jsonl"))
	var slowest int64
	for _, r := range recs {
		slowest = max(slowest, r.Done-r.Sent)
	}
	slo := map[string]any{"slo": []any{fmt.Sprintf("e2e=%dus", 2*slowest/1000)}}
	writeVirtualRuns(t, p("fast.jsonl"), fast, l, seeds, slo)
	writeVirtualRuns(t, p("slow.jsonl"), slow, l, []uint64{3, 4}, slo)
	code, out, _ := runMain(t, "compare", p("fast.jsonl"), p("slow.jsonl"))
	var row string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(strings.TrimSpace(line), "goodput") {
			row = line
		}
	}
	if code != exitcode.Regression || !strings.Contains(row, "0.000 req/s") || !strings.Contains(row, "arithmetic means") ||
		!strings.Contains(row, "regressed") || strings.Contains(out, "goodput: not compared") {
		t.Errorf("fast vs slow under an SLO only fast meets (%v): exit %d, goodput row %q:\n%s", slo["slo"], code, row, out)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}
