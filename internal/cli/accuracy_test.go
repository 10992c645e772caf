package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/sim"
)

// TestAccuracyAgainstFixedSimulator measures a simulator with fixed TTFT 100 ms and ITL 20 ms
// through `servebench run` at 64 concurrent streams of 32 tokens, and checks our medians
// against the simulator's truth log of the same run: when it read each request and when it
// wrote each token. On a busy machine the simulator itself runs late (tokens written in
// bunches: a median ITL near 0 is then the truth, not our error), so the reference is what it
// did, not what it was configured to do; the bounds hold at a load average of 10 on 2 cores.
// The exact overhead figures come from the overhead benchmark, not from this test.
func TestAccuracyAgainstFixedSimulator(t *testing.T) {
	truth := filepath.Join(t.TempDir(), "truth.jsonl")
	srv, url := startSimServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL, c.TruthFile = 100*time.Millisecond, 20*time.Millisecond, truth
	})
	js := filepath.Join(t.TempDir(), "s.json")
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "32",
		"--requests", "64", "--concurrency", "64", "--warmup", "0", "-o", filepath.Join(t.TempDir(), "r.jsonl"), "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if err := srv.Close(); err != nil { // flushes the truth log
		t.Fatal(err)
	}
	var s map[string]any
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	ttft, _ := s["median_ttft_ms"].(float64)
	itl, _ := s["median_itl_ms"].(float64)
	wantTTFT, wantITL := truthMedians(t, truth)
	t.Logf("median TTFT %.2f ms (truth %.2f), median ITL %.2f ms (truth %.2f)", ttft, wantTTFT, itl, wantITL)
	if s["completed"] != 64.0 {
		t.Fatalf("completed %v, want 64", s["completed"])
	}
	// Our TTFT starts when the request left, the simulator's when it read it: ours is longer
	// by the loopback and by how late the simulator read, never shorter than its own by more
	// than the clocks' resolution.
	slack := 25.0 // ms: how late a busy machine's simulator reads a request
	if raceDetector {
		slack = 50
	}
	if ttft < wantTTFT-1 || ttft > 1.1*wantTTFT+slack {
		t.Errorf("median TTFT %.2f ms against the simulator's %.2f ms", ttft, wantTTFT)
	}
	// Event times come from the kernel's receive times, so our gaps are the simulator's
	// write gaps plus the loopback's jitter.
	if math.Abs(itl-wantITL) > 0.1*wantITL+1 {
		t.Errorf("median ITL %.2f ms against the simulator's %.2f ms", itl, wantITL)
	}
}

// truthMedians are the median TTFT (read → first content written) and the median gap between
// consecutive content events of one request, in ms, from the simulator's truth log.
func truthMedians(t *testing.T, path string) (ttft, itl float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	read, last := map[string]int64{}, map[string]int64{}
	var ttfts, gaps []float64
	for line := range strings.Lines(string(b)) {
		var e struct {
			ID      string `json:"request_id"`
			Kind    string `json:"kind"`
			Read    int64  `json:"read_ns"`
			Written int64  `json:"written_ns"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("truth line %q: %v", line, err)
		}
		switch {
		case e.Kind == "request":
			read[e.ID] = e.Read
		case e.Kind == "content" && last[e.ID] == 0:
			if r, ok := read[e.ID]; ok {
				ttfts = append(ttfts, float64(e.Written-r)/1e6)
			}
			last[e.ID] = e.Written
		case e.Kind == "content":
			gaps = append(gaps, float64(e.Written-last[e.ID])/1e6)
			last[e.ID] = e.Written
		}
	}
	if len(ttfts) == 0 || len(gaps) == 0 {
		t.Fatalf("truth log: %d first tokens with a read time, %d gaps", len(ttfts), len(gaps))
	}
	slices.Sort(ttfts)
	slices.Sort(gaps)
	return metrics.Quantile(ttfts, 50), metrics.Quantile(gaps, 50)
}
