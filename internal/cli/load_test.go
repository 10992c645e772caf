package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/record"
	"servebench/sim"
)

// roofline returns a simulator in roofline mode (no fixed latencies) with max-num-seqs n.
func roofline(t *testing.T, n int) string {
	return startSim(t, func(c *sim.Config) { c.TTFT, c.ITL, c.MaxNumSeqs = 0, 0, n })
}

var kneeRe = regexp.MustCompile(`saturation knee: run \d+, .* \(([0-9.]+) req/s`)

// TestSweepAutoKneeMovesWithMaxNumSeqs: with more sequences per step the engine saturates
// later, so the knee (the lightest load reaching 90% of the peak) moves to a higher rate.
// Serial: beside the parallel tests and busy loops (load 14 to 16) the starved simulators put
// the knee of max-num-seqs 12 below that of 2 (8.7 against 25.4 req/s), even with the two
// sweeps run at once. Where the knee is, given a sweep's figures, is sweep's
// TestKneeAndMaxGoodput.
func TestSweepAutoKneeMovesWithMaxNumSeqs(t *testing.T) {
	knee := func(seqs int) float64 {
		p := filepath.Join(t.TempDir(), "s.jsonl")
		code, out, errs := runMain(t, "sweep", "-q", "--url", roofline(t, seqs), "--auto", "--points", "2",
			"--requests", "16", "--warmup", "0", "--input-tokens", "32", "--output-tokens", "8", "--arrival", "constant",
			"--slo", "ttft=1h", "--search-steps", "1", "-o", p)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		m := kneeRe.FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, "max goodput: run") || !strings.Contains(out, "highest load meeting the SLOs") {
			t.Fatalf("no knee or goodput named:\n%s", out)
		}
		h, recs := readRecords(t, p)
		if h.Sweep != "auto" || len(h.Ends) != 4 || h.Ends[0].Label != "synchronous (concurrency 1)" || h.Ends[1].Concurrency != 16 {
			t.Errorf("sweep header %q, ends %+v", h.Sweep, h.Ends)
		}
		runs := map[int]int{}
		for _, r := range recs {
			runs[r.Run]++
		}
		if len(runs) != 4 || runs[0] != 16 {
			t.Errorf("records per run %v", runs)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	small, large := knee(2), knee(12)
	t.Logf("knee at %.2f req/s with max-num-seqs 2, %.2f with 12", small, large)
	if !(large > 1.5*small) {
		t.Errorf("knee at %.2f req/s with max-num-seqs 2 and %.2f with 12: it should move up", small, large)
	}
}

func TestSweepListAndUsage(t *testing.T) {
	t.Parallel()
	url := roofline(t, 8)
	p := filepath.Join(t.TempDir(), "s.jsonl")
	code, out, errs := runMain(t, "sweep", "-q", "--url", url, "--concurrency", "1,4", "--requests", "6",
		"--input-tokens", "16", "--output-tokens", "4", "-o", p)
	if code != 0 || !strings.Contains(out, "concurrency 4") || !strings.Contains(out, "saturation knee") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if h, _ := readRecords(t, p); len(h.Ends) != 2 || h.Ends[1].Run != 1 || h.Ends[1].Quality == nil {
		t.Errorf("ends %+v", h.Ends)
	}
	for _, args := range [][]string{{"sweep"}, {"sweep", "--auto", "--rate", "1"}, {"sweep", "--concurrency", "0"},
		{"sweep", "--auto", "--slo", "ttft=1s", "--fail-below", "99%"}} {
		if code, _, errs := runMain(t, args...); code != exitcode.Usage {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
	}
}

// TestFailBelowExitCode: --fail-below exits 3 when attainment is lower, 0 when met.
func TestFailBelowExitCode(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil) // fixed 20 ms TTFT
	dir := t.TempDir()
	run := func(slo string) (int, string, string) {
		return runMain(t, "run", "--url", url, "--requests", "6", "--concurrency", "2", "--input-tokens", "16",
			"--output-tokens", "4", "--slo", slo, "--fail-below", "99%", "--force", "-o", filepath.Join(dir, "r.jsonl"))
	}
	code, out, errs := run("ttft=10s")
	if code != 0 || !strings.Contains(out, "attainment  100.00%") || !strings.Contains(errs, "SLO gate passed") {
		t.Errorf("met: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = run("ttft=1ms")
	if code != exitcode.SLO || !strings.Contains(errs, "SLO gate failed: attainment 0.00%") || !strings.Contains(out, "attainment") {
		t.Errorf("missed: exit %d\n%s\n%s", code, out, errs)
	}
	// the report of the file shows the same SLO figures as the run did
	if _, rep, _ := runMain(t, "report", filepath.Join(dir, "r.jsonl")); rep != out {
		t.Errorf("report differs from run:\n%s\n---\n%s", rep, out)
	}
	if code, _, _ := runMain(t, "run", "--fail-below", "99%"); code != exitcode.Usage {
		t.Errorf("--fail-below without --slo: exit %d", code)
	}
}

// TestCapShowsQueueTime: an open loop faster than the capped server can serve queues in the
// client, and the summary shows it and names the cap as the cause.
func TestCapShowsQueueTime(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errs := runMain(t, "run", "--url", url, "--rate", "200", "--arrival", "constant", "--max-concurrency", "1",
		"--requests", "8", "--warmup", "0", "--input-tokens", "16", "--output-tokens", "4", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, recs := readRecords(t, p)
	queued := 0
	for _, r := range recs {
		if r.Dispatched-r.Scheduled > int64(10*time.Millisecond) {
			queued++
		}
	}
	if queued < 4 || !strings.Contains(out, "--max-concurrency cap of 1, which was full") {
		t.Errorf("%d requests queued behind the cap\n%s", queued, out)
	}
}

func TestStopRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t.Run("max-errors", func(t *testing.T) {
		url := startSim(t, func(c *sim.Config) { c.FaultRate = 1 })
		p := filepath.Join(dir, "e.jsonl")
		code, out, errs := runMain(t, "run", "-q", "--url", url, "--requests", "200", "--concurrency", "2", "--warmup", "0",
			"--input-tokens", "16", "--output-tokens", "4", "--max-errors", "5", "-o", p)
		h, recs := readRecords(t, p)
		if code != 0 || len(recs) > 20 || len(h.Ends) != 1 || h.Ends[0].Stop != "max-errors" || !strings.Contains(out, "sending stopped early") {
			t.Errorf("exit %d, %d records, ends %+v\n%s\n%s", code, len(recs), h.Ends, out, errs)
		}
	})
	t.Run("duration and grace", func(t *testing.T) {
		// a request of 100 tokens at 50 ms each lasts 5 s: the grace must cut both short. The
		// bound is on the records' own span (first sent to last done), not on the wall clock,
		// which on a busy machine also counts the workload build and start-up
		url := startSim(t, func(c *sim.Config) { c.ITL = 50 * time.Millisecond })
		p := filepath.Join(dir, "d.jsonl")
		code, _, errs := runMain(t, "run", "-q", "--url", url, "--duration", "300ms", "--grace", "100ms", "--concurrency", "2",
			"--warmup", "0", "--input-tokens", "16", "--output-tokens", "100", "-o", p)
		h, recs := readRecords(t, p)
		cancelled := 0
		var first, last int64 = -1, 0
		for _, r := range recs {
			if r.ErrorClass == record.ErrCancelled {
				cancelled++
			}
			if first < 0 || r.Sent < first {
				first = r.Sent
			}
			last = max(last, r.Done)
		}
		span := time.Duration(last - first)
		// both requests were cancelled, so nothing was measured: INVALID (exit 7)
		if code != exitcode.Invalid || cancelled != 2 || h.Ends[0].Stop != "duration" || span > 4*time.Second {
			t.Errorf("exit %d, %d cancelled of %d, ends %+v, records span %v: %s", code, cancelled, len(recs), h.Ends, span, errs)
		}
	})
}

// TestSteadyStateWindow: only requests sent inside the window are measured, and the window's
// length is the divisor. An open loop's phases follow its schedule, not the sender's
// lateness (load's take), so each request's phase is checked against its scheduled time and
// the test runs beside the parallel tests; where arrivals were left unsent at the end (the
// sender fell that far behind) the phases' counts are logged, not held (package load's
// TestSteadyStateFromTimeZero and TestSteadyStatePhasesAndOffset hold them exactly).
func TestSteadyStateWindow(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errs := runMain(t, "run", "-q", "--url", url, "--rate", "40", "--arrival", "constant", "--duration", "1s",
		"--warmup", "0", "--warmup-duration", "300ms", "--cooldown-duration", "200ms", "--input-tokens", "16", "--output-tokens", "2", "-o", p)
	if code != 0 || !strings.Contains(out, "window      0.500 s") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	h, recs := readRecords(t, p)
	phases := map[string]int{}
	var start, late int64 = -1, 0
	for _, r := range recs {
		phases[r.Phase]++
		if start < 0 || r.Scheduled < start {
			start = r.Scheduled
		}
		late = max(late, r.Sent-r.Scheduled)
	}
	// every request's phase is where its schedule fell: the first 300 ms, the window, the last 200
	const edge = int64(5 * time.Millisecond)
	for _, r := range recs {
		var want string
		switch at := r.Scheduled - start; {
		case at < int64(300*time.Millisecond)-edge:
			want = record.PhaseWarmup
		case at > int64(300*time.Millisecond)+edge && at < int64(800*time.Millisecond)-edge:
			want = record.PhaseMeasure
		case at > int64(800*time.Millisecond)+edge:
			want = record.PhaseCooldown
		}
		if want != "" && r.Phase != want {
			t.Errorf("request %d scheduled %v after the start is %s, want %s", r.ID, time.Duration(r.Scheduled-start), r.Phase, want)
		}
	}
	if unsent := h.Ends[0].Unsent; unsent > 0 {
		// the sender fell so far behind its schedule (the machine, or the VM, stalled the
		// process) that arrivals were never sent, and the counts below cannot hold; the rule
		// above did
		t.Logf("the sender was behind by up to %v (%d arrivals unsent): phases %v not counted", time.Duration(late), unsent, phases)
		if len(recs)+unsent < 38 {
			t.Errorf("%d sent + %d unsent of 40 arrivals", len(recs), unsent)
		}
		return
	}
	// 40 req/s: 12 in the first 300 ms, 20 in the window, 8 in the last 200 ms (±1 at edges)
	if phases["warmup"] < 11 || phases["measure"] < 19 || phases["measure"] > 21 || phases["cooldown"] < 7 {
		t.Errorf("phases %v", phases)
	}
}

func TestTraceAndRamp(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	os.WriteFile(trace, []byte(`{"t": 0}
{"t": 0.05, "output_tokens": 3}
{"t": 0.1, "input_tokens": 40, "output_tokens": 5}
`), 0o644)
	p := filepath.Join(dir, "r.jsonl")
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--trace", trace, "--input-tokens", "16", "--output-tokens", "2", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, recs := readRecords(t, p)
	if len(recs) != 3 {
		t.Fatalf("%d records for 3 arrivals", len(recs))
	}
	for _, r := range recs {
		want := map[int][3]int64{0: {0, 16, 2}, 1: {50e6, 16, 3}, 2: {100e6, 40, 5}}[r.ID]
		if r.Scheduled != want[0] || int64(r.PromptTokens) != want[1] || int64(r.OutputTokens) != want[2] || r.Phase != "measure" {
			t.Errorf("record %d: scheduled %d, %d in, %d out; want %v", r.ID, r.Scheduled, r.PromptTokens, r.OutputTokens, want)
		}
	}
	code, _, errs = runMain(t, "run", "-q", "--url", url, "--ramp", "linear:10..40", "--duration", "500ms",
		"--input-tokens", "16", "--output-tokens", "2", "--force", "-o", p)
	if _, recs := readRecords(t, p); code != 0 || len(recs) < 5 || len(recs) > 20 {
		t.Errorf("ramp: exit %d, %d records (want ≈ 12): %s", code, len(recs), errs)
	}
	if code, _, _ := runMain(t, "run", "--ramp", "linear:1..2"); code != exitcode.Usage {
		t.Errorf("--ramp without --duration: exit %d", code)
	}
}
