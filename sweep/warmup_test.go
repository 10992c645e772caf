package sweep

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"servebench/bench"
	"servebench/record"
	"servebench/runspec"
	"servebench/sim"
	"servebench/sim/simtest"
)

// TestAutoThroughputWarmupMissesCache: sweep --auto's maximum-throughput point warms with
// one request per user, each on a prompt of its own, so the simulator's prefix cache serves
// none of them whole. With 16 warmup prompts cycled over 24 users, 8 warmup requests were
// cache hits: a warmup cheaper than the measured load it was meant to warm (against
// llama.cpp the warmup ran at 25 req/s, the measured requests at 11-19).
func TestAutoThroughputWarmupMissesCache(t *testing.T) {
	c := sim.DefaultConfig()
	c.MaxNumSeqs = 4 // model mode with its prefix cache on (the default)
	_, url := simtest.Start(t, c)

	const users = 24
	s := runspec.Default()
	s.URL, s.Requests, s.InputTokens, s.OutputTokens = url, users, 256, 16
	s.Output, s.Quiet = filepath.Join(t.TempDir(), "s.jsonl"), true
	s.MarkSet("url", "requests", "input-tokens", "output-tokens", "output", "quiet")
	sc := Default()
	sc.Auto, sc.Points = true, 0
	if err := sc.Validate(&s); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := Run(ctx, ctx, s, &sc, bench.Options{Version: "test"}); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(s.Output)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, recs, err := record.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Ends) != 2 {
		t.Fatalf("%d runs, want the synchronous and the throughput point", len(h.Ends))
	}
	peak := h.Ends[1].Run
	warm, seen, hits := 0, 0, 0
	for _, r := range recs {
		if r.Run != peak || r.Phase != record.PhaseWarmup {
			continue
		}
		warm++
		cached, ok := r.Server["usage.cached_tokens"]
		if !ok {
			continue
		}
		seen++
		// a prompt of its own still shares its first block or so with the others (the
		// nonce and the synthetic text's start); a repeated prompt is served nearly whole
		if cached > 0.5*float64(r.PromptTokens) {
			hits++
		}
	}
	if warm != users {
		t.Fatalf("%d warmup requests at the throughput point, want one per user (%d)", warm, users)
	}
	if seen == 0 {
		t.Fatal("the simulator reported no cached_tokens: the test cannot tell a cache hit")
	}
	if hits > 0 {
		t.Errorf("%d of %d warmup requests at the throughput point were served from the prefix cache", hits, seen)
	}
}
