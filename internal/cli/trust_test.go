package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/internal/peertest"
	"servebench/metrics"
	"servebench/record"
	"servebench/sim"
	"servebench/vtime"
)

// TestWarmupAutoAgainstColdStart: against the simulator with a modelled cold phase (slow
// first steps and a capture cost per batch shape: a custom one and --cold-start's profile),
// over HTTP, --warmup auto measures no earlier than max(10% of the cold phase, 1 s) before
// its end, or names the measured requests that ran before it (metrics.LateWarmup), and
// soon after it (the virtual-time measurement of the same judge is in package
// vtime; docs/metrics.md quotes both), and a --warmup 1 run of the same workload is not
// steady.
func TestWarmupAutoAgainstColdStart(t *testing.T) {
	cold := func(c *sim.Config) { c.ColdSteps, c.ColdFactor, c.GraphCapture = 300, 4, 20*time.Millisecond }
	dir := t.TempDir()
	for _, mod := range []func(*sim.Config){cold, func(c *sim.Config) { c.ColdStart = true }} {
		srv, url := startSimServer(t, mod)
		out := filepath.Join(dir, "auto.jsonl")
		start := time.Now()
		code, _, errs := runMain(t, "run", "-q", "--url", url, "--warmup", "auto", "--requests", "60", "--concurrency", "4",
			"--input-tokens", "64", "--output-tokens", "16", "-o", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		h, recs := readRecords(t, out)
		firstMeasured := int64(0)
		for _, r := range recs {
			if r.Phase == record.PhaseMeasure && (firstMeasured == 0 || r.Sent < firstMeasured) {
				firstMeasured = r.Sent
			}
		}
		ph := srv.Phases()
		coldEnd := ph.ColdEnd.Sub(h.Start)
		late := time.Duration(firstMeasured) - coldEnd
		bound := max(coldEnd/10, time.Second)
		t.Logf("cold phase ended %v after t0 (%d steps, %d shapes captured); --warmup auto: %d requests (%s), first measured request sent %v after its end (goal: within %v; run took %v)",
			coldEnd, ph.ColdSteps, ph.Captures, h.Ends[0].WarmupRequests, h.Ends[0].WarmupStop, late, bound, time.Since(start))
		named := lateNamed(h, recs)
		if named != nil {
			t.Logf("named late: the first %d measured requests, %.0f%% slower in ITL (p %.2g), %.2f s", named.Requests, 100*(named.Ratio-1), named.P, named.Seconds)
		}
		// beside busy loops the judge can stop early (docs/metrics.md "Warmup"): a run that
		// began measuring too early passes only when it names its late requests
		early := late < -bound && named == nil
		if ph.ColdEnd.IsZero() || early || late > max(bound, 3500*time.Millisecond) || h.Ends[0].WarmupStop != "converged" {
			t.Errorf("measuring began %v after the cold phase ended at %v (%s; late requests named: %v)", late, coldEnd, h.Ends[0].WarmupStop, named != nil)
		}
		os.Remove(out)
	}

	_, url := startSimServer(t, cold)
	out1 := filepath.Join(dir, "one.jsonl")
	code, stdout, errs := runMain(t, "run", "--url", url, "--warmup", "1", "--requests", "200", "--concurrency", "4",
		"--input-tokens", "64", "--output-tokens", "16", "-o", out1)
	if code != 0 {
		t.Fatalf("--warmup 1: exit %d: %s", code, errs)
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
