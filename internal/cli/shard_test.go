package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/record"
)

// TestShardsMergeIntoOneRun splits a run into 3 concurrent shard processes (in-process here)
// against one simulator, started together by --start-at, and merges their files with report:
// counts and token totals equal the shards' sums and the single-process run's; the shards ran
// at the same time (each one's measured span overlaps the others'); and the merged window is
// exactly the union of theirs on the wall clock, first sent to last done, with throughput
// over it. (This once compared the merged throughput with the single run's, 0.6× to 1.6×:
// two 0.6 s windows taken at different moments of a busy machine, which drifted apart. The
// mistakes that ratio was there for, a window summed over shards or taken from one, are
// what the exact window rejects.)
func TestShardsMergeIntoOneRun(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil) // fixed 20 ms TTFT, 2 ms ITL
	dir := t.TempDir()
	common := []string{"run", "-q", "--url", url, "--input-tokens", "32", "--output-tokens", "20",
		"--requests", "60", "--concurrency", "6", "--warmup", "6"}
	single := filepath.Join(dir, "single.jsonl")
	if code, _, errs := runMain(t, append(common, "-o", single)...); code != 0 {
		t.Fatalf("single run: exit %d: %s", code, errs)
	}
	var wg sync.WaitGroup
	errs := make([]string, 3)
	// without a common start, a shard that is slower to get ready (a busy machine) starts
	// late and stretches the merged window, as a pod scheduled late would
	at := time.Now().Add(4 * time.Second).Format(time.RFC3339Nano)
	for i := range 3 {
		wg.Go(func() {
			p := filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i))
			if code, _, e := runMain(t, append(common, "--shard", fmt.Sprintf("%d/3", i), "--start-at", at, "-o", p)...); code != 0 {
				errs[i] = fmt.Sprintf("shard %d: exit %d: %s", i, code, e)
			}
		})
	}
	wg.Wait()
	if s := strings.Join(errs, ""); s != "" {
		t.Fatal(s)
	}
	ids := map[int]bool{}
	var sumOut int
	spans := make([][2]int64, 3) // each shard's measured first sent and last done, wall-clock ns
	for i := range 3 {
		h, recs := readRecords(t, filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i)))
		if h.Shard != fmt.Sprintf("%d/3", i) {
			t.Errorf("shard %d header says %q", i, h.Shard)
		}
		t0 := h.Start.UnixNano()
		spans[i] = [2]int64{math.MaxInt64, math.MinInt64}
		for _, r := range recs {
			if ids[r.ID] || r.ID%3 != i {
				t.Errorf("shard %d sent request %d", i, r.ID)
			}
			ids[r.ID] = true
			if r.Phase == record.PhaseMeasure {
				sumOut += r.OutputTokens
				if r.Sent <= 0 || r.Done < r.Sent {
					t.Fatalf("shard %d request %d: sent %d, done %d", i, r.ID, r.Sent, r.Done)
				}
				spans[i] = [2]int64{min(spans[i][0], t0+r.Sent), max(spans[i][1], t0+r.Done)}
			}
		}
	}
	for i := range 3 {
		for j := range 3 {
			if spans[i][0] >= spans[j][1] {
				t.Errorf("shard %d sent its first measured request after shard %d had finished: they did not run together", i, j)
			}
		}
	}
	window := time.Duration(max(spans[0][1], spans[1][1], spans[2][1]) - min(spans[0][0], spans[1][0], spans[2][0])).Seconds()
	if len(ids) != 66 {
		t.Errorf("the shards sent %d distinct requests, want 66", len(ids))
	}
	summary := func(files ...string) map[string]any {
		t.Helper()
		code, out, e := runMain(t, append([]string{"report", "--format", "json"}, files...)...)
		if code != 0 {
			t.Fatalf("report %v: exit %d: %s", files, code, e)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	shards, _ := filepath.Glob(filepath.Join(dir, "shard-*.jsonl"))
	merged, one := summary(shards...), summary(single)
	if merged["completed"] != 60.0 || merged["total_output_tokens"] != float64(sumOut) || merged["total_output_tokens"] != one["total_output_tokens"] {
		t.Errorf("merged: completed %v, output tokens %v; shards' sum %d, single run %v", merged["completed"], merged["total_output_tokens"], sumOut, one["total_output_tokens"])
	}
	md, _ := merged["duration"].(float64)
	mt, _ := merged["request_throughput"].(float64)
	if md != window || math.Abs(mt-60/window) > 1e-9*mt {
		t.Errorf("merged window %v s, throughput %v req/s; want the shards' union %v s and 60 requests over it, %v req/s",
			md, mt, window, 60/window)
	}
	// files of different workloads are refused
	other := filepath.Join(dir, "other.jsonl")
	if code, _, e := runMain(t, "run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "4", "--requests", "6",
		"--concurrency", "3", "--shard", "1/3", "-o", other); code != 0 {
		t.Fatal(e)
	}
	code, _, e := runMain(t, "report", shards[0], other, shards[2])
	if code == 0 || !strings.Contains(e, "not the same run") {
		t.Errorf("mixed workloads: exit %d: %s", code, e)
	}
}

func TestShardFlagErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "--shard", "3/3"},
		{"run", "--shard", "x"},
		{"run", "--shard", "0/4", "--concurrency", "2"},
		{"run", "--shard", "0/2", "--ramp", "linear:1..4", "--duration", "2s"},
	} {
		if code, _, e := runMain(t, args...); code != exitcode.Usage || !strings.Contains(e, "shard") {
			t.Errorf("%v: exit %d: %s", args, code, e)
		}
	}
}

// TestRepeatReportMatchesRun checks that a file of several runs is reported as run printed it:
// a table of every run, then the last run's summary; report, which reads every request, adds
// each key metric over the runs with its interval under the table, and nothing else.
func TestRepeatReportMatchesRun(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errs := runMain(t, "run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "4",
		"--requests", "6", "--concurrency", "2", "--repeat", "3", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"repeat 1/3", "repeat 3/3", "run 3's (the last)", "6 completed"} {
		if !strings.Contains(out, want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	_, again, _ := runMain(t, "report", p)
	block := overRunsRE.FindString(again)
	if !strings.Contains(block, "TTFT p50") || strings.Replace(again, block, "", 1) != out {
		t.Errorf("report is not run's output with the over-the-runs block:\n--- run\n%s--- report\n%s", out, again)
	}
}

// overRunsRE is the text report's "over the N runs" block of a --repeat file.
var overRunsRE = regexp.MustCompile(`\nover the \d+ runs\n(  [^\n]*\n)+`)

// TestShardsSendExactlyTheUnsplitRequests checks uneven splits: warmup 1, 4 measured requests
// and 3 shards must send requests 0..4 once each, with the unsplit run's prompts and phases.
func TestShardsSendExactlyTheUnsplitRequests(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	common := []string{"run", "-q", "--url", url, "--input-tokens", "8", "--output-tokens", "2",
		"--requests", "4", "--warmup", "1", "--concurrency", "3"}
	single := filepath.Join(dir, "single.jsonl")
	if code, _, e := runMain(t, append(common, "-o", single)...); code != 0 {
		t.Fatal(e)
	}
	_, want := readRecords(t, single)
	phase := map[int]string{}
	for _, r := range want {
		phase[r.ID] = r.Phase
	}
	got := map[int]string{}
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		if code, _, e := runMain(t, append(common, "--shard", fmt.Sprintf("%d/3", i), "-o", p)...); code != 0 {
			t.Fatal(e)
		}
		_, recs := readRecords(t, p)
		for _, r := range recs {
			if _, dup := got[r.ID]; dup {
				t.Errorf("request %d sent twice", r.ID)
			}
			got[r.ID] = r.Phase
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(phase) {
		t.Errorf("shards sent %v, the unsplit run %v", got, phase)
	}
}

// TestMergedShardsKeepRunsApart checks that shards of a --repeat run are merged run by run,
// with every shard's run-end lines (here, the stop reason of a --max-errors rule).
func TestMergedShardsKeepRunsApart(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	for i := range 2 {
		p := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		code, _, e := runMain(t, "run", "-q", "--url", url, "--input-tokens", "8", "--output-tokens", "2", "--requests", "10",
			"--concurrency", "2", "--repeat", "2", "--shard", fmt.Sprintf("%d/2", i), "-o", p)
		if code != 0 {
			t.Fatal(e)
		}
	}
	code, out, e := runMain(t, "report", filepath.Join(dir, "s0.jsonl"), filepath.Join(dir, "s1.jsonl"))
	if code != 0 {
		t.Fatal(e)
	}
	for _, want := range []string{"repeat 1/2", "repeat 2/2", "run 2's (the last)", "10 completed"} {
		if !strings.Contains(out, want) {
			t.Errorf("merged report lacks %q:\n%s", want, out)
		}
	}
	// run-end lines of every shard reach the merged header
	fa, _ := os.Open(filepath.Join(dir, "s0.jsonl"))
	fb, _ := os.Open(filepath.Join(dir, "s1.jsonl"))
	defer fa.Close()
	defer fb.Close()
	ra, _ := record.NewReader(fa)
	rb, _ := record.NewReader(fb)
	m, err := record.Merge([]record.Source{{Name: "a", Reader: ra}, {Name: "b", Reader: rb}})
	if err != nil {
		t.Fatal(err)
	}
	var rec record.Record
	for m.Read(&rec) == nil {
	}
	if n := len(m.Header().Ends); n != 4 {
		t.Errorf("merged header has %d run-end lines, want 2 shards × 2 runs", n)
	}
}
