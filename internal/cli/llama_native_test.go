package cli

import (
	"path/filepath"
	"sort"
	"testing"

	"servebench/record"
)

// TestLlamaCppNative runs servebench with --api auto against a real llama.cpp server, which
// must be detected as llamacpp (native /completion), and checks the figures against the
// server's own: output tokens exact from the server, prompt tokens = requested + BOS,
// per-event counts from the token ids, and at concurrency 1 the client's TPOT within 25% of
// timings.predicted_per_token_ms (median over requests).
func TestLlamaCppNative(t *testing.T) {
	t.Parallel()
	url := llamaMini1(t)
	const in, out = 64, 48
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--api", "auto", "--input-tokens", "64", "--output-tokens", "48",
		"--requests", "10", "--concurrency", "1", "--warmup", "2", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	hdr, recs := readRecords(t, p)
	if hdr.Target.API != "llamacpp" || hdr.Workload.PromptLengths != "exact" {
		t.Fatalf("api %q, prompt lengths %q", hdr.Target.API, hdr.Workload.PromptLengths)
	}
	var ratios []float64
	for _, r := range recs {
		if r.Phase != record.PhaseMeasure {
			continue
		}
		if !r.OK() || r.OutputTokens != out || r.OutputTokensSource != record.SourceServer || r.PromptTokens != in+1 {
			t.Errorf("request %d: %s %s, out %d (%s), prompt %d", r.ID, r.ErrorClass, r.Error, r.OutputTokens, r.OutputTokensSource, r.PromptTokens)
			continue
		}
		n := 0
		for _, e := range r.Events {
			n += int(e.N)
		}
		if n != out {
			t.Errorf("request %d: per-event counts sum to %d, want %d", r.ID, n, out)
		}
		server := r.Server["timings.predicted_per_token_ms"]
		// TPOT = (E2E − TTFT) / (output_tokens − 1), from our own event stamps
		tpot := float64(r.Events[len(r.Events)-1].T-r.Events[0].T) / float64(r.OutputTokens-1) / 1e6
		ratios = append(ratios, tpot/server)
	}
	if len(ratios) < 8 {
		t.Fatalf("only %d good requests", len(ratios))
	}
	sort.Float64s(ratios)
	med := ratios[len(ratios)/2]
	t.Logf("client/server TPOT ratio: median %.3f, all %.3f", med, ratios)
	if med < 0.75 || med > 1.25 {
		t.Errorf("median client/server TPOT ratio %.3f, want within 25%%", med)
	}
}
