package load

import (
	"testing"
	"time"

	"servebench/record"
)

// TestStampReasoning checks the phases a stamp records: reasoning events before the first
// answer event, its time, the reasoning token count and its source, and an untouched record
// when no reasoning came.
func TestStampReasoning(t *testing.T) {
	type ev struct {
		reasoning bool
		tokens    int
	}
	for _, tc := range []struct {
		name        string
		events      []ev
		server      int // usage reasoning_tokens; 0 = not sent
		wantEvents  int
		wantAnswer  int // index of the first answer event, -1 = none recorded
		wantTokens  int
		wantSource  string
		wantAnswerd bool
	}{
		{"no reasoning", []ev{{false, 1}, {true, 1}, {false, 1}}, 0, 0, -1, 0, "", true},
		{"server count", []ev{{true, 1}, {true, 2}, {false, 1}, {true, 1}, {false, 1}}, 7, 2, 2, 7, record.SourceServer, true},
		{"event counts", []ev{{true, 2}, {true, 2}, {false, 1}}, 0, 2, 2, 4, record.SourceEvents, true},
		{"unknown counts", []ev{{true, 0}, {true, 0}, {true, 0}, {false, 0}}, 0, 3, 3, 3, record.SourceCount, true},
		{"no answer", []ev{{true, 1}, {true, 1}}, 0, 2, -1, 2, record.SourceEvents, false},
	} {
		rec := &record.Record{Phase: record.PhaseMeasure}
		st := &stamp{t0: time.Now(), rec: rec}
		st.Dispatched()
		st.WroteRequest()
		for _, e := range tc.events {
			st.EventRead()
			if e.reasoning {
				st.Reasoning()
			}
			st.Content(e.tokens)
		}
		if tc.server > 0 {
			st.ReasoningTokens(tc.server)
		}
		st.Done()
		st.finish(record.SourceRequested)
		wantT := int64(0)
		if tc.wantAnswer >= 0 {
			wantT = rec.Events[tc.wantAnswer].T
		}
		if rec.ReasoningEvents != tc.wantEvents || rec.FirstAnswer != wantT || rec.ReasoningTokens != tc.wantTokens ||
			rec.ReasoningTokensSource != tc.wantSource || rec.Answered() != tc.wantAnswerd {
			t.Errorf("%s: reasoning events %d, first answer %d, tokens %d (%q), answered %v; want %d, %d, %d (%q), %v", tc.name,
				rec.ReasoningEvents, rec.FirstAnswer, rec.ReasoningTokens, rec.ReasoningTokensSource, rec.Answered(),
				tc.wantEvents, wantT, tc.wantTokens, tc.wantSource, tc.wantAnswerd)
		}
	}
}
