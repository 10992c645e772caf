package report

import (
	"strings"
	"testing"

	"servebench/record"
)

// TestLoadLineWords: counts print as digits however large (a million users is not "1e+06
// users"), and a length distribution that drew one length only (--lengths mix:16x2) is what
// the line says, not the --input-tokens/--output-tokens defaults it replaced and never sent.
func TestLoadLineWords(t *testing.T) {
	fixed := func(n int) record.Dist { return record.Dist{Mean: float64(n), P50: float64(n), Max: n} }
	for _, c := range []struct {
		cfg     map[string]any
		lengths *record.Lengths
		want    string
		not     string
	}{
		{map[string]any{"concurrency": 1e6, "requests": 2e7, "warmup": 1e6, "input_tokens": 512.0, "output_tokens": 128.0},
			&record.Lengths{Input: fixed(512), Output: fixed(128)},
			"1000000 users (closed loop), 20000000 requests + 1000000 warmup, in 512 / out 128 tokens", "e+"},
		{map[string]any{"concurrency": 4.0, "requests": 4.0, "warmup": 0.0, "input_tokens": 512.0, "output_tokens": 128.0, "lengths": "mix:16x2"},
			&record.Lengths{Input: fixed(16), Output: fixed(2)}, "in 16 / out 2 tokens", "512"},
		{map[string]any{"rate": 2e6, "arrival": "poisson", "max_concurrency": 3e6, "requests": 4.0, "input_tokens": 8.0, "output_tokens": 2.0},
			nil, "poisson arrivals at 2000000 req/s, at most 3000000 in flight", "e+"},
	} {
		h := &record.Header{Config: c.cfg}
		h.Workload.Source, h.Workload.Lengths = "synthetic", c.lengths
		got := loadLine(h)
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("loadLine = %q, want %q and no %q", got, c.want, c.not)
		}
	}
}

// TestLoadLinePooling: a run against an embeddings or rerank API asks for no output, so its
// load line gives the input tokens a request and no output length; a chat run's keeps it.
func TestLoadLinePooling(t *testing.T) {
	cfg := map[string]any{"concurrency": 4.0, "requests": 8.0, "warmup": 0.0, "input_tokens": 64.0, "output_tokens": 16.0}
	for api, want := range map[string]string{"rerank": "in 64 tokens a request", "openai-embeddings": "in 64 tokens a request",
		"openai-chat": "in 64 / out 16 tokens"} {
		h := &record.Header{Config: cfg, Target: record.Target{API: api}}
		h.Workload.Source = "synthetic"
		if got := loadLine(h); !strings.HasSuffix(got, want) {
			t.Errorf("%s: loadLine = %q, want it to end %q", api, got, want)
		}
	}
}
