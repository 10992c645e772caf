package metrics

import (
	"testing"

	"servebench/record"
)

// TestModalityBreakdown: requests with media are grouped by what they carried; text-only ones
// are in no group, and a run without media has no such breakdown.
func TestModalityBreakdown(t *testing.T) {
	var a Accumulator
	for i, m := range []struct{ img, aud int }{{1, 0}, {2, 0}, {0, 1}, {1, 1}, {0, 0}} {
		base := int64(i+1) * 1e8
		a.Add(&record.Record{ID: i, Phase: record.PhaseMeasure, Sent: base, Done: base + 5e7, Images: m.img, AudioClips: m.aud,
			Events: []record.Event{{T: base + 1e7, N: 1}}, OutputTokens: 1, OutputTokensSource: record.SourceServer})
	}
	b := a.Summary().BreakdownBy("modality")
	if b == nil || len(b.Groups) != 3 {
		t.Fatalf("modalities %+v", b)
	}
	got := map[string]int{}
	for _, g := range b.Groups {
		got[g.Value] = g.Summary.Completed
	}
	if got["image"] != 2 || got["audio"] != 1 || got["image+audio"] != 1 {
		t.Errorf("groups %v", got)
	}
	var plain Accumulator
	plain.Add(&record.Record{Phase: record.PhaseMeasure, Sent: 1, Done: 2})
	if plain.Summary().BreakdownBy("modality") != nil {
		t.Error("a run without media has a modality breakdown")
	}
}
