package cli

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"servebench/sim"
)

// lineLog is a stderr that keeps what was written and when each piece arrived.
type lineLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	start time.Time
	first map[string]time.Duration // substring → when it first appeared
	watch []string
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for _, w := range l.watch {
		if _, seen := l.first[w]; !seen && strings.Contains(l.buf.String(), w) {
			l.first[w] = time.Since(l.start)
		}
	}
	return len(p), nil
}

func (l *lineLog) seen(w string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.first[w]
	return d, ok
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestWaitingLineOnClosedPort: a run against a port nobody listens on says so at once,
// not after the whole ready timeout (60 s of silence by default). The bound is half the 10 s
// between the wait's later lines (bench.waitingEvery): a first line that waited for a period
// fails it, a busy machine's slow start does not.
func TestWaitingLineOnClosedPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // a port that was just free: connection refused
	log := &lineLog{start: time.Now(), first: map[string]time.Duration{}, watch: []string{"waiting for " + url}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"run", "--url", url, "--ready-timeout", "60s", "-o", filepath.Join(t.TempDir(), "r.jsonl")},
			strings.NewReader(""), &bytes.Buffer{}, log)
	}()
	deadline := time.After(30 * time.Second)
	for {
		if d, ok := log.seen("waiting for " + url); ok {
			t.Logf("waiting line after %v: %q", d, strings.TrimSpace(log.String()))
			if d > 5*time.Second {
				t.Errorf("waiting line after %v, want within 5 s, half the period of the later lines", d)
			}
			if !strings.Contains(log.String(), "s of 60") {
				t.Errorf("waiting line does not say how long it will wait: %q", log.String())
			}
			break
		}
		select {
		case <-deadline:
			t.Fatalf("no waiting line in 30 s: %q", log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	<-done
}

// TestProgressShowsLifeBeforeCompletions: requests that stream for several seconds show up
// on the progress line as requests in flight and tokens streamed per second before the first
// of them completes.
func TestProgressShowsLifeBeforeCompletions(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 10*time.Millisecond, 10*time.Millisecond })
	log := &lineLog{start: time.Now(), first: map[string]time.Duration{}}
	code := Main(context.Background(), []string{"run", "--url", url, "--requests", "2", "--concurrency", "2", "--warmup", "0",
		"--output-tokens", "800", "--input-tokens", "32", "-o", filepath.Join(t.TempDir(), "r.jsonl")},
		strings.NewReader(""), &bytes.Buffer{}, log)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, log.String())
	}
	re := regexp.MustCompile(`0/2 requests  (\d+) in flight  [0-9.]+ req/s  (\d+) tok/s streamed  TTFT p50 ([0-9.]+ ms|—)`)
	m := re.FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no progress line before the first completion showing requests in flight, tokens streamed and TTFT:\n%s", log.String())
	}
	inFlight, _ := strconv.Atoi(m[1])
	tps, _ := strconv.Atoi(m[2])
	if inFlight != 2 || tps <= 0 {
		t.Errorf("in flight %d, streamed %d tok/s: want 2 and more than 0 (%q)", inFlight, tps, m[0])
	}
}
