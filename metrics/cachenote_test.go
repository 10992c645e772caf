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

// TestCacheNoteRepeatsSent: where records say what each prompt repeats of those sent before it
// (Record.Repeats), the note sets the server's cached share beside that, for any workload (a
// prompts file here); hits beyond it by more than 5 points are INVALID, with both figures.
func TestCacheNoteRepeatsSent(t *testing.T) {
	h := &record.Header{Workload: record.Workload{Source: "groups.jsonl", RepeatsRecorded: true, ReusableShare: 0.2}, Config: map[string]any{"prompts": "groups.jsonl"}}
	sum := &Summary{InputTokens: 104448, RepeatedPromptTokens: 94208, CachedPromptTokens: 94208, CachedBeyondOpening: 93344, CachedReported: 96, Completed: 96}
	ws := cacheWarnings(sum, h)
	got := strings.Join(Texts(ws), "\n")
	if len(Invalidating(ws)) > 0 || !strings.Contains(got, "the workload repeats 90.2% of its prompt tokens by design; the server served 90.2% from its prefix cache (94208 of 104448)") {
		t.Errorf("a prompts file whose groups share prefixes, cached as sent:\n%s", got)
	}
	sum.CachedPromptTokens, sum.CachedBeyondOpening = 104400, 103500 // the same file again, on a warm cache
	ws = cacheWarnings(sum, h)
	got = strings.Join(Texts(ws), "\n")
	if len(Invalidating(ws)) != 1 || !strings.Contains(got, "served 104400 of 104448 prompt tokens (100%) from its prefix cache, 10 points more than the workload repeats by design (90.2%)") {
		t.Errorf("the file replayed on a warm cache:\n%s", got)
	}
	// a file from before records carried it: the header's share
	h.Workload.RepeatsRecorded = false
	if got := strings.Join(Texts(cacheWarnings(sum, h)), "\n"); !strings.Contains(got, "repeats 20.0%") {
		t.Errorf("a file from before: %s", got)
	}
}
