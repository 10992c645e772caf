package report

import (
	"math"
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
	warm := 0.0
	for _, pt := range p.marks[0].pts {
		if pt[0] < -1.4 {
			warm += pt[1]
		}
	}
	if p.x0 > -1.9 || p.marks[0].pts[0][0] > -1.4 || warm == 0 {
		t.Errorf("axis from %g, first point %v: the warmup's tokens are not drawn before 0", p.x0, p.marks[0].pts[0])
	}
	svg := p.svg()
	for _, want := range []string{`data-shade="warmup"`, `data-shade="after the window"`, `class="edge"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %s", want)
		}
	}
}

// A 2.3 s run at a flat rate is drawn with enough points (not 1 s buckets: three), at a flat
// rate to its end: its last, partial bucket is taken over the time it covered, not as a whole
// bucket that plunges.
func TestChartsOverTimeShortRun(t *testing.T) {
	var s Series
	// 4 users back to back, 230 ms each, one token every 10 ms: 400 tokens/s throughout
	for u := range 4 {
		for i := range 10 {
			sent := 1e9 + int64(i)*230e6 + int64(u)
			r := record.Record{ID: u*10 + i, Phase: record.PhaseMeasure, Scheduled: sent, Dispatched: sent, Sent: sent, Status: 200,
				OutputTokens: 23, OutputTokensSource: record.SourceServer}
			for k := range 23 {
				r.Events = append(r.Events, record.Event{T: sent + int64(k+1)*10e6 - 5e6, N: 1})
			}
			r.FirstEvent, r.Done = r.Events[0].T, sent+230e6
			s.Add(&r)
		}
	}
	p := timePlot("tokens-time", "tokens", "tok/s", "note", []Run{{Label: "run", Series: &s}}, func(s *Series) []float64 { return s.tokens })
	pts := p.marks[0].pts
	if len(pts) < 15 {
		t.Fatalf("%d points for a 2.3 s run, want 15 or more: %v", len(pts), pts)
	}
	for _, pt := range pts {
		if math.Abs(pt[1]-400) > 40 {
			t.Errorf("point %v: want 400 tok/s ± 10%% (a flat rate), all: %v", pt, pts)
		}
	}
	if !strings.Contains(p.note, "0.1 s buckets") {
		t.Errorf("note %q does not name the bucket width", p.note)
	}
}
