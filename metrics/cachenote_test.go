package metrics

import (
	"strings"
	"testing"

	"servebench/record"
)

// TestCacheNotes: reuse the workload was built for is set beside what the server cached, in the
// workload's own words (a session run is never told to restart its server); reuse beyond it
// gets advice that matches its cause.
func TestCacheNotes(t *testing.T) {
	sum := &Summary{InputTokens: 1000, CachedPromptTokens: 500, CachedBeyondOpening: 400, CachedReported: 10, Completed: 10}
	sessions := &record.Header{Workload: record.Workload{Source: "synthetic+sessions", ReusableShare: 0.5}}
	got := strings.Join(Texts(cacheWarnings(sum, sessions)), "\n")
	if !strings.Contains(got, "as session history") || strings.Contains(got, "restart") || strings.Contains(got, "TTFT measures cache hits") {
		t.Errorf("session run, 50%% cached as designed:\n%s", got)
	}
	like := &record.Header{Like: &record.Like{File: "base.jsonl"}, Workload: record.Workload{Source: "synthetic"}}
	got = strings.Join(Texts(cacheWarnings(sum, like)), "\n")
	if !strings.Contains(got, "replays its baseline's prompts") || !strings.Contains(got, "--flush-cache") {
		t.Errorf("--like replay, 50%% cached:\n%s", got)
	}
	plain := &record.Header{Workload: record.Workload{Source: "synthetic"}, Config: map[string]any{}}
	got = strings.Join(Texts(cacheWarnings(sum, plain)), "\n")
	if !strings.Contains(got, "another --seed") || strings.Contains(got, "--repeat") {
		t.Errorf("plain run, 50%% cached:\n%s", got)
	}
	if !strings.Contains(got, "--nonce off") {
		t.Errorf("a run without a nonce, 50%% cached, does not say the prompts were the seed's alone:\n%s", got)
	}
	nonced := &record.Header{Workload: record.Workload{Source: "synthetic", Nonce: "00000000000000a1"}, Config: map[string]any{}}
	got = strings.Join(Texts(cacheWarnings(sum, nonced)), "\n")
	if strings.Contains(got, "--seed") || !strings.Contains(got, "elsewhere") {
		t.Errorf("a run with text of its own, 50%% cached, is told to change what cannot be the cause:\n%s", got)
	}
	sum.CachedPromptTokens, sum.CachedBeyondOpening = 40, 0 // 4%: a BOS token or so per request
	if n := Texts(cacheWarnings(sum, plain)); len(n) != 0 {
		t.Errorf("4%% cached: %v", n)
	}
	// 15% cached, all of it openings (a chat template, a shared first word): no note
	sum.CachedPromptTokens, sum.CachedBeyondOpening = 150, 40
	if n := Texts(cacheWarnings(sum, plain)); len(n) != 0 {
		t.Errorf("15%% cached within the requests' openings: %v", n)
	}
}
