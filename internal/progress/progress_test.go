package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"servebench/record"
)

// TestLine renders the line at a chosen instant instead of waiting for the ticker, so the
// figures are exact and the test cannot depend on how busy the machine is.
func TestLine(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf)
	if p.tty || p.every != logEvery {
		t.Errorf("a buffer is not a terminal: tty %v every %v", p.tty, p.every)
	}
	p.every = time.Hour // no tick during the test: it renders by hand below
	p.Begin("point 2/5 rate 4 req/s", 10, 0)
	for i := range 4 {
		p.Add(&record.Record{Phase: record.PhaseMeasure, Sent: 1, Events: []record.Event{{T: int64(i+1) * 1e6}}, OutputTokens: 8})
	}
	p.Add(&record.Record{Phase: record.PhaseMeasure, ErrorClass: record.ErrHTTP5xx})
	p.Add(&record.Record{Phase: record.PhaseWarmup}) // not counted
	p.render(p.start.Add(2 * time.Second))
	p.End()
	line := strings.Split(strings.TrimSpace(buf.String()), "\n")[0]
	for _, want := range []string{"[point 2/5 rate 4 req/s]", "5/10 requests", "2.0 req/s", "16 out tok/s", "TTFT p50 3.0 ms", "errors 1"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
}

// TestLineDuration shows elapsed time against --duration when there is no request count.
func TestLineDuration(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf)
	p.every = time.Hour
	p.Begin("", 0, time.Minute)
	p.render(p.start.Add(3 * time.Second))
	p.End()
	if got := buf.String(); !strings.Contains(got, "3s/1m0s") || !strings.Contains(got, "TTFT p50 —") {
		t.Errorf("duration line %q", got)
	}
}

// NO_COLOR and TERM=dumb never get escape codes, whatever the output is.
func TestPlainWhenAsked(t *testing.T) {
	t.Setenv("TERM", "xterm")
	os.Unsetenv("NO_COLOR")
	if plainAsked() {
		t.Fatal("plain without NO_COLOR or TERM=dumb")
	}
	t.Setenv("TERM", "dumb")
	if !plainAsked() {
		t.Error("TERM=dumb is not plain")
	}
	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "")
	if plainAsked() {
		t.Error("an empty NO_COLOR is plain (no-color.org: present and not empty)")
	}
	t.Setenv("NO_COLOR", "1")
	if !plainAsked() {
		t.Error("NO_COLOR=1 is not plain")
	}
}

// TestTimeLeft: the estimate is the remaining requests at the rate they finished since the
// first did, not since the start (which holds the warmup and the first requests' latency).
func TestTimeLeft(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf)
	p.every = time.Hour
	p.Begin("", 10, 0)
	for range 3 {
		p.Add(&record.Record{Phase: record.PhaseMeasure, OutputTokens: 1})
	}
	p.firstDone = p.start.Add(time.Minute) // a minute of warmup, then one request a second
	p.render(p.start.Add(time.Minute + 2*time.Second))
	p.End()
	if got := buf.String(); !strings.Contains(got, "elapsed 1:02  ~0:07 left") {
		t.Errorf("line %q, want elapsed 1:02 and 7 s left", got)
	}
}
