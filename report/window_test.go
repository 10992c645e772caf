package report

import (
	"strings"
	"testing"

	"servebench/record"
)

// TestChartsOverTimeShowWarmup: the warmup's tokens and requests count in the figures over
// time (it loads the server), before 0 on the axis, shaded, and the window's edges are marked;
// the distributions still hold measured requests only.
func TestChartsOverTimeShowWarmup(t *testing.T) {
	var s Series
	add := func(id int, phase string, sent int64) {
		r := record.Record{ID: id, Phase: phase, Scheduled: sent, Dispatched: sent, Sent: sent, Status: 200,
			OutputTokens: 10, OutputTokensSource: record.SourceServer}
		for k := range 10 {
			r.Events = append(r.Events, record.Event{T: sent + int64(k+1)*100e6, N: 1})
		}
		r.FirstEvent, r.Done = r.Events[0].T, r.Events[9].T
		s.Add(&r)
	}
	for i := range 4 { // warmup 1 s to 3 s, measured 3 s to 9 s, a cooldown request at 9 s
		add(i, record.PhaseWarmup, 1e9+int64(i)*500e6)
	}
	for i := range 12 {
		add(10+i, record.PhaseMeasure, 3e9+int64(i)*500e6)
	}
	add(30, record.PhaseCooldown, 9e9)
	if len(s.ttft.vals) != 12 {
		t.Errorf("%d TTFT values, want the 12 measured", len(s.ttft.vals))
	}
	p := timePlot("tokens-time", "tokens", "tok/s", "note", []Run{{Label: "run", Series: &s}}, func(s *Series) []float64 { return s.tokens })
	if p.x0 > -1.9 || p.marks[0].pts[0][0] > -1.4 || p.marks[0].pts[0][1] == 0 {
		t.Errorf("axis from %g, first point %v: the warmup's tokens are not drawn before 0", p.x0, p.marks[0].pts[0])
	}
	svg := p.svg()
	for _, want := range []string{`data-shade="warmup"`, `data-shade="after the window"`, `class="edge"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %s", want)
		}
	}
}
