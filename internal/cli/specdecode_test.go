package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/sim"
)

// TestSpecDecodeAcceptance: a run against the simulator with speculative decoding
// (k = 4, α = 0.7) keeps vLLM's spec_decode counters without --scrape-all, and its summary
// gives an acceptance rate within 1% of the configured one, the mean accepted length, and
// ITL per token beside ITL per chunk, in text and JSON.
func TestSpecDecodeAcceptance(t *testing.T) {
	t.Parallel()
	const alpha = 0.7
	_, url := startSimServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL = 5*time.Millisecond, 2*time.Millisecond
		c.SpecTokens, c.SpecAcceptance = 4, alpha
	})
	dir := t.TempDir()
	recs, js := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "r.json")
	code, out, errs := runMain(t, "run", "--url", url, "--input-tokens", "32", "--output-tokens", "200",
		"--requests", "30", "--concurrency", "8", "-o", recs, "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"spec decode", "acceptance rate", "mean accepted length", "ITL split", "tokens per event"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	var sum struct {
		Server struct {
			Spec *struct {
				Rate    *float64  `json:"spec_decode_acceptance_rate"`
				Length  *float64  `json:"spec_decode_acceptance_length"`
				PerPos  []float64 `json:"spec_decode_per_position_acceptance_rates"`
				Drafts  float64   `json:"spec_decode_num_drafts"`
				Drafted float64   `json:"spec_decode_draft_tokens"`
			} `json:"spec_decode"`
		} `json:"server_metrics"`
		ITLToken float64 `json:"median_itl_token_ms"`
	}
	b, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil || sum.Server.Spec == nil || sum.Server.Spec.Rate == nil || sum.Server.Spec.Length == nil {
		t.Fatalf("no spec_decode figures in the JSON (%v):\n%s", err, b)
	}
	sp := sum.Server.Spec
	if math.Abs(*sp.Rate-alpha) > 0.01*alpha {
		t.Errorf("acceptance rate %v from the counters, want %v within 1%%", *sp.Rate, alpha)
	}
	// mean accepted length = 1 + α·k
	if want := 1 + alpha*4; math.Abs(*sp.Length-want) > 0.01*want {
		t.Errorf("mean accepted length %v, want %v within 1%%", *sp.Length, want)
	}
	if len(sp.PerPos) != 4 || sp.Drafted != 4*sp.Drafts || sp.PerPos[0] < sp.PerPos[3] {
		t.Errorf("per position %v, drafts %v, draft tokens %v", sp.PerPos, sp.Drafts, sp.Drafted)
	}
	t.Logf("acceptance rate %.4f (configured %v), mean accepted length %.3f, per position %v, %v drafts",
		*sp.Rate, alpha, *sp.Length, sp.PerPos, sp.Drafts)
}
