package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"servebench/sim"
)

// TestAccuracyAgainstFixedSimulator measures a simulator with fixed TTFT 100 ms and ITL 20 ms
// through `servebench run` at 64 concurrent streams of 32 tokens: the medians must come out
// within 10% of the truth (30% under the race detector, which slows everything). The exact
// figures come from the overhead benchmark, not from this test.
func TestAccuracyAgainstFixedSimulator(t *testing.T) {
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 100*time.Millisecond, 20*time.Millisecond })
	tol := 0.10
	if raceDetector {
		tol = 0.60 // instrumentation, not the tool: the ±10% check runs without -race in .ci/run
	}
	var last string
	for attempt := 0; attempt < 3; attempt++ { // the machine is shared: best of three
		js := filepath.Join(t.TempDir(), "s.json")
		code, _, errs := runMain(t, "run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "32",
			"--requests", "64", "--concurrency", "64", "-o", filepath.Join(t.TempDir(), "r.jsonl"), "--json", js)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var s map[string]any
		b, _ := os.ReadFile(js)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		ttft, _ := s["median_ttft_ms"].(float64)
		itl, _ := s["median_itl_ms"].(float64)
		if math.Abs(ttft-100)/100 <= tol && math.Abs(itl-20)/20 <= tol && s["completed"] == 64.0 {
			return
		}
		last = string(b)
		t.Logf("attempt %d: median TTFT %.2f ms, median ITL %.2f ms", attempt+1, ttft, itl)
	}
	t.Errorf("median TTFT or ITL off by more than %.0f%% in three attempts; last summary:\n%s", tol*100, last)
}
