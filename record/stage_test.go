package record

import (
	"bytes"
	"testing"
)

// TestStageRoundTrip: a record's stage index is encoded as encoding/json would (left out for
// stage 0) and decoded back.
func TestStageRoundTrip(t *testing.T) {
	for _, stage := range []int{0, 2} {
		r := &Record{ID: 4, Phase: PhaseMeasure, Session: 1, Turn: 2, Stage: stage, Scheduled: 9}
		got := encodeFast(t, r)
		if want := viaJSON(t, r); !bytes.Equal(got, want) {
			t.Fatalf("encode differs:\n got %s\nwant %s", got, want)
		}
		var back Record
		if ok := decodeFast(bytes.TrimSpace(got), &back); !ok || back.Stage != stage {
			t.Fatalf("decoded stage %d (fast path %v) from %s", back.Stage, ok, got)
		}
	}
	if got := (Stage{Users: 1, Duration: 2e9}).String() + ", " + (Stage{Rate: 0.5, Duration: 3e10}).String() + ", " + (Stage{Rate: 1e6, Duration: 1e9}).String(); got != "1 user × 2s, 0.5 req/s × 30s, 1000000 req/s × 1s" {
		t.Errorf("names %q", got)
	}
}
