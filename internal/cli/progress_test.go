package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

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
