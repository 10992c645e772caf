package bench

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSlowNoticeUnderQuiet: a slow workload build prints a line on Slow although Log is nil
// (-q), and nothing once it is stopped.
func TestSlowNoticeUnderQuiet(t *testing.T) {
	defer func(a, e time.Duration) { slowAfter, slowEvery = a, e }(slowAfter, slowEvery)
	slowAfter, slowEvery = 10*time.Millisecond, 10*time.Millisecond
	var w lockedBuffer
	b := &Session{opt: Options{Slow: &w}}
	stop := b.slowNotice(context.Background(), time.Now())
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(w.String(), "building the workload") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	got := w.String()
	if !strings.Contains(got, "building the workload") {
		t.Fatalf("no notice: %q", got)
	}
	time.Sleep(50 * time.Millisecond)
	if w.String() != got {
		t.Error("a notice after stop")
	}
	quiet := &Session{}
	quiet.slowNotice(context.Background(), time.Now())() // no writer at all: nothing to do
}
