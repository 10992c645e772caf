package cli

import (
	"path/filepath"
	"testing"
	"time"

	"servebench/sim"
)

// TestToolCallsAgainstSimulator offers the built-in weather tools with tool_choice required;
// the simulator answers every request with a call built from the chosen tool's schema and
// breaks a seeded 30% of them. Every record must hold one call of a tool that was offered,
// its first piece stamped, and the calls the simulator broke counted as invalid: the share
// lies near 30% and every invalid one names its violation.
func TestToolCallsAgainstSimulator(t *testing.T) {
	_, url := startSimServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL, c.Tools.CallInvalid = 20*time.Millisecond, 2*time.Millisecond, 0.3
	})
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errs := runMain(t, "run", "-q", "--url", url, "--tools", "builtin:weather", "--tool-choice", "required",
		"--input-tokens", "16", "--output-tokens", "24", "--fixed-output", "--requests", "200", "--concurrency", "16", "--warmup", "0", "-o", rec)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, recs := readRecords(t, rec)
	invalid := 0
	for _, r := range recs {
		if len(r.ToolCalls) != 1 || r.FirstToolCall == 0 || r.FirstToolCall < r.Sent {
			t.Fatalf("record %d: %d tool calls, first tool call at %d (sent %d): want 1, after sent", r.ID, len(r.ToolCalls), r.FirstToolCall, r.Sent)
		}
		c := r.ToolCalls[0]
		if (c.Name != "get_weather" && c.Name != "get_forecast") || c.ID == "" || c.ArgTokens != 23 {
			t.Fatalf("record %d: call %+v: want get_weather or get_forecast with an id and 23 argument pieces", r.ID, c)
		}
		if c.Invalid != "" {
			invalid++
		}
	}
	share := float64(invalid) / float64(len(recs))
	t.Logf("%d of %d calls invalid (%.1f%%)", invalid, len(recs), 100*share)
	if share < 0.2 || share > 0.4 {
		t.Errorf("invalid share %.3f over %d calls: want 0.3 ± 0.1 (the simulator's --tool-call-invalid)", share, len(recs))
	}
}
