package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"servebench/internal/peertest"
	"servebench/metrics"
	"servebench/record"
	"servebench/sim"
	"servebench/vtime"
)

// TestWarmupAutoAgainstColdStart: against the simulator with --cold-start's profile (slow
// first steps and a capture cost per batch shape), over HTTP, --warmup auto's judge runs: the
// run warms up at least one request per user, records why warming stopped, measures the
// requests asked for after it (the timings are logged: when measuring began against the
// cold phase's end, and the late requests named). When
// the judge stops, within max(10% of the cold phase, 1 s) of its end, is held in virtual
// time by vtime's TestWarmupAutoColdStart (the real load runner and judge, ten load shapes,
// --cold-start's profile; docs/metrics.md "Warmup" quotes it), and the naming of late
// requests by metrics' own tests. A --warmup 1 run of the same workload through a cold phase
// is not steady: `report` of that run written in virtual time (writeVirtualRuns) says so
// (`run` prints the same text: TestRunAgainstSimulatorAndReportMatches). Before, this test
// held the timings of three live runs (two of 60 requests with --warmup auto, one of 200),
// alone before the parallel tests: 31 s of the package's serial phase.
func TestWarmupAutoAgainstColdStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, url := startSimServer(t, func(c *sim.Config) { c.ColdStart = true })
	out := filepath.Join(dir, "auto.jsonl")
	start := time.Now()
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--warmup", "auto", "--requests", "24", "--concurrency", "4",
		"--input-tokens", "64", "--output-tokens", "16", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, recs := readRecords(t, out)
	firstMeasured, measured, warm := int64(0), 0, 0
	for _, r := range recs {
		if r.Phase != record.PhaseMeasure {
			warm++
			continue
		}
		measured++
		if firstMeasured == 0 || r.Sent < firstMeasured {
			firstMeasured = r.Sent
		}
	}
	e := h.Ends[0]
	ph := srv.Phases()
	coldEnd := ph.ColdEnd.Sub(h.Start)
	t.Logf("cold phase ended %v after t0 (%d steps, %d shapes captured); --warmup auto: %d requests (%s), first measured request sent %v after its end (run took %v)",
		coldEnd, ph.ColdSteps, ph.Captures, e.WarmupRequests, e.WarmupStop, time.Duration(firstMeasured)-coldEnd, time.Since(start))
	if named := lateNamed(h, recs); named != nil {
		t.Logf("named late: the first %d measured requests, %.0f%% slower in ITL (p %.2g), %.2f s", named.Requests, 100*(named.Ratio-1), named.P, named.Seconds)
	}
	if !slices.Contains([]string{"converged", "max requests", "max time"}, e.WarmupStop) || e.WarmupRequests < 4 || warm != e.WarmupRequests || measured != 24 {
		t.Errorf("--warmup auto: %d warmup requests (%q), %d warmup and %d measured records, want at least 4 warmup requests, as many records, and 24 measured",
			e.WarmupRequests, e.WarmupStop, warm, measured)
	}

	cold := sim.DefaultConfig()
	cold.ColdStart = true
	one := filepath.Join(dir, "one.jsonl")
	writeVirtualRuns(t, one, cold, vtime.Load{Users: 4, Requests: 200, Warmup: 1, InputTokens: 64, OutputTokens: 16, Noise: liveNoise}, []uint64{1}, nil)
	code, stdout, errs := runMain(t, "report", one)
	if code != 0 {
		t.Fatalf("report of a --warmup 1 run: exit %d: %s", code, errs)
	}
	if !strings.Contains(stdout, "not steady") {
		t.Errorf("a --warmup 1 run through the cold phase is called steady:\n%s", stdout)
	}
}

// TestDriftAndQueueing: `report` of a run whose server throttled part-way names the drift
// of the metric it moved ("not steady: … rose"), and of an open loop at twice the server's
// capacity says unbounded queueing. The runs are the real load runner (package load) against
// the simulator's engine model in virtual time (package vtime), written as records files: the
// CLI's part is reading them and printing the verdict. `run` prints the same text as `report`
// (TestRunAgainstSimulatorAndReportMatches). The verdicts themselves, over many runs, are
// vtime's TestMatrix (throttling and overload rows, in virtual time) and metrics'
// TestRecordedSteadyRates (overload over HTTP, recorded); the warning texts are metrics'
// TestSteadyFindsDrift and TestSteadyFindsUnboundedQueueing. Before, this test ran 15 s of
// real-time runs over HTTP, serially (a busy neighbour moved its verdicts).
func TestDriftAndQueueing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, c sim.Config, l vtime.Load) (string, *vtime.Result) {
		t.Helper()
		res, err := vtime.Run(t, c, l)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := res.Write(&b); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p, res
	}
	base := sim.DefaultConfig()
	base.MaxNumSeqs = 8
	// a closed loop of 4 users, throttled ×2 from half way through its steady twin's run
	closed := vtime.Load{Users: 4, Requests: 240, Warmup: 4, InputTokens: 64, OutputTokens: 16, InputJitter: 0.5, Seed: 1}
	_, twin := write("twin.jsonl", base, closed)
	thr := base
	thr.ThrottleAfter, thr.ThrottleFactor = time.Duration(twin.Records[len(twin.Records)-1].Done)/2, 2
	throttled, _ := write("throttle.jsonl", thr, closed)
	code, out, errs := runMain(t, "report", throttled)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "not steady: ITL p50 rose") && !strings.Contains(out, "not steady: TTFT p50 rose") {
		t.Errorf("throttling ×2 from half way not named as a rise:\n%s", out)
	}
	// capacity first: a closed loop of max-num-seqs users shows the most this server does
	full := vtime.Load{Users: 8, Requests: 32, Warmup: 8, InputTokens: 64, OutputTokens: 64}
	capPath, _ := write("cap.jsonl", base, full)
	capRate := requestRate(t, capPath)
	over := vtime.Load{Rate: 2 * capRate, Requests: int(2 * capRate * 10), Warmup: 4, InputTokens: 64, OutputTokens: 64, Seed: 2}
	overload, _ := write("over.jsonl", base, over)
	if code, out, errs = runMain(t, "report", overload); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "unbounded queueing") {
		t.Errorf("an open loop at twice capacity (%.1f req/s) is not called unbounded queueing:\n%s", 2*capRate, out)
	}
}

// lateNamed is the late-warmup check's finding over a records file (metrics.LateWarmup).
func lateNamed(h *record.Header, recs []record.Record) *metrics.LateWarmup {
	a := metrics.NewAccumulator(metrics.Options{})
	a.SetHeader(h)
	for i := range recs {
		a.Add(&recs[i])
	}
	return a.Summary().LateWarmup
}

func requestRate(t *testing.T, path string) float64 {
	t.Helper()
	_, recs := readRecords(t, path)
	var first, last int64
	n := 0
	for _, r := range recs {
		if r.Phase != record.PhaseMeasure || !r.OK() {
			continue
		}
		if first == 0 || r.Sent < first {
			first = r.Sent
		}
		last = max(last, r.Done)
		n++
	}
	return float64(n) / (float64(last-first) / 1e9)
}

// TestWarmupAutoLlamaCpp: against the real llama.cpp peer --warmup auto converges and the
// measured run gets a steady-state verdict. Whether it is steady is logged, not asserted: the
// peer shares the machine's two cores with the rest of the suite, so its speed moves whenever
// other tests start or stop, and the check is right to say so.
func TestWarmupAutoLlamaCpp(t *testing.T) {
	url := peertest.Llama(t, "mini.gguf", "-t", "1", "-np", "2", "-c", "4096")
	out := filepath.Join(t.TempDir(), "llama.jsonl")
	code, stdout, errs := runMain(t, "run", "--url", url, "--warmup", "auto", "--warmup-timeout", "90s", "--requests", "60", "--concurrency", "2",
		"--input-tokens", "32", "--output-tokens", "16", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, _ := readRecords(t, out)
	if e := h.Ends[0]; e.WarmupStop == "max time" {
		// the peer shares two cores with the rest of the suite: at a load average of 30 its
		// speed never settles, and the cap is what --warmup auto is right to hit then
		load, _ := os.ReadFile("/proc/loadavg")
		t.Skipf("the peer did not settle within --warmup-timeout 90s (%d warmup requests; load average %s): too busy a machine to judge", e.WarmupRequests, strings.Fields(string(load) + " ?")[0])
	}
	if e := h.Ends[0]; e.WarmupStop != "converged" || !strings.Contains(stdout, "steady      ") {
		t.Errorf("warmup %d (%s):\n%s", e.WarmupRequests, e.WarmupStop, stdout)
	}
	if !strings.Contains(stdout, "steady      steady") {
		t.Logf("not steady (the machine's load moved under the peer?):\n%s", stdout)
	}
	t.Logf("llama.cpp: --warmup auto converged after %d requests", h.Ends[0].WarmupRequests)
}
