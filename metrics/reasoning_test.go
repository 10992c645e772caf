package metrics

import (
	"strings"
	"testing"
	"time"

	"servebench/record"
)

// TestTTFORules checks the per-request rule: TTFT without reasoning, first answer − sent with
// it, none when no answer came.
func TestTTFORules(t *testing.T) {
	ev := []record.Event{{T: 30, N: 1}, {T: 40, N: 1}, {T: 70, N: 1}}
	for _, tc := range []struct {
		name string
		r    record.Record
		want int64
		ok   bool
	}{
		{"no reasoning", record.Record{Sent: 10, Events: ev}, 20, true},
		{"reasoning", record.Record{Sent: 10, Events: ev, ReasoningEvents: 2, FirstAnswer: 70}, 60, true},
		{"no answer", record.Record{Sent: 10, Events: ev, ReasoningEvents: 3}, 0, false},
	} {
		v, ok := ttfo(&tc.r)
		m := PerRequest(&tc.r)
		if v != tc.want || ok != tc.ok || m.TTFO.OK != tc.ok || (ok && m.TTFO.V != float64(tc.want)) {
			t.Errorf("%s: ttfo %d, %v (per request %+v); want %d, %v", tc.name, v, ok, m.TTFO, tc.want, tc.ok)
		}
	}
}

// TestParseSLOTTFO reads ttfo (and ttfat) as the TTFO objective.
func TestParseSLOTTFO(t *testing.T) {
	for _, in := range []string{"ttfo=2s", "TTFAT=2s"} {
		s, err := ParseSLOs([]string{in})
		if err != nil || s.TTFO != 2*time.Second || !s.Any() || !strings.Contains(s.String(), "TTFO ≤ 2s") {
			t.Errorf("%s: %+v, %v", in, s, err)
		}
	}
	if _, err := ParseSLOs([]string{"ttfx=1s"}); err == nil || !strings.Contains(err.Error(), "ttfo") {
		t.Errorf("unknown objective: %v, want the list with ttfo", err)
	}
}
