package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/record"
)

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	if newProgress(&buf, true) != nil {
		t.Error("--quiet has a progress line")
	}
	p := newProgress(&buf, false)
	if p.tty || p.every != logEvery {
		t.Errorf("a buffer is not a terminal: tty %v every %v", p.tty, p.every)
	}
	p.every = 10 * time.Millisecond
	p.begin("point 2/5 rate 4 req/s", 10, 0)
	for i := range 4 {
		p.add(&record.Record{Phase: record.PhaseMeasure, Sent: 1, Events: []record.Event{{T: int64(i+1) * 1e6}}, OutputTokens: 8})
	}
	p.add(&record.Record{Phase: record.PhaseMeasure, ErrorClass: record.ErrHTTP5xx})
	p.add(&record.Record{Phase: record.PhaseWarmup}) // not counted
	time.Sleep(50 * time.Millisecond)
	p.end()
	line := strings.Split(strings.TrimSpace(buf.String()), "\n")[0]
	for _, want := range []string{"[point 2/5 rate 4 req/s]", "5/10 requests", "req/s", "out tok/s", "TTFT p50 3.0 ms", "errors 1"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
}

// TestWorstAttainmentGatesEveryRun checks that --fail-below judges the worst run of a
// --repeat, not only the last one printed.
func TestWorstAttainmentGatesEveryRun(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	a := &metrics.Summary{SLOAttainment: v(0.5), SLO: metrics.SLO{TTFT: time.Second}}
	b := &metrics.Summary{SLOAttainment: v(1), SLO: metrics.SLO{TTFT: time.Second}}
	if got := worstAttainment([]runSummary{{sum: a}, {run: 1, sum: b}}, b); got != a {
		t.Errorf("worst run not chosen: %v", *got.SLOAttainment)
	}
	if _, err := sloGate("99%", worstAttainment([]runSummary{{sum: a}, {run: 1, sum: b}}, b)); err == nil {
		t.Error("a repeat whose first run missed the SLO passed the gate")
	}
}
