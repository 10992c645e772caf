package sim

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// truthLog appends TruthEvents as JSONL:
//
//	{"request_id":"cmpl-1","seq":0,"tokens":1,"written_ns":1712345678901234567,"write_began_ns":1712345678901230000,"kind":"content"}
//
// written_ns is Unix nanoseconds of the wall clock right after the flush; write_began_ns the
// same right before the write (TruthEvent.WriteBegan): the bytes left between the two. A request's first
// content event (or its response event) adds "cached_tokens":N while the prefix cache is
// on: its prompt tokens found in the cache. Lines are formatted by hand because this sits
// on the per-event path. The buffer is flushed every second and on close so that a crash
// loses at most about a second of truth.
type truthLog struct {
	mu     sync.Mutex
	f      *os.File
	w      *bufio.Writer
	line   []byte
	err    error
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

func openTruthLog(path string) (*truthLog, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("open truth log %s: %w", path, err)
	}
	t := &truthLog{f: f, w: bufio.NewWriterSize(f, 1<<16), stop: make(chan struct{}), done: make(chan struct{})}
	go t.flushLoop()
	return t, nil
}

func (t *truthLog) flushLoop() {
	defer close(t.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			t.mu.Lock()
			if !t.closed && t.err == nil {
				t.err = t.w.Flush()
			}
			t.mu.Unlock()
		case <-t.stop:
			return
		}
	}
}

func (t *truthLog) write(evs []TruthEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.err != nil {
		return
	}
	for _, ev := range evs {
		b := append(t.line[:0], `{"request_id":`...)
		b = appendJSONString(b, ev.RequestID)
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, int64(ev.Seq), 10)
		b = append(b, `,"tokens":`...)
		b = strconv.AppendInt(b, int64(ev.Tokens), 10)
		b = append(b, `,"written_ns":`...)
		b = strconv.AppendInt(b, ev.Written.UnixNano(), 10)
		b = append(b, `,"write_began_ns":`...)
		b = strconv.AppendInt(b, ev.WriteBegan.UnixNano(), 10)
		b = append(b, `,"kind":`...)
		b = appendJSONString(b, ev.Kind)
		if ev.hasCached {
			b = append(b, `,"cached_tokens":`...)
			b = strconv.AppendInt(b, int64(ev.CachedTokens), 10)
		}
		b = append(b, "}\n"...)
		t.line = b
		if _, err := t.w.Write(b); err != nil {
			t.err = err
			return
		}
	}
}

func (t *truthLog) close() error {
	close(t.stop)
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.err == nil {
		t.err = t.w.Flush()
	}
	if err := t.f.Close(); t.err == nil {
		t.err = err
	}
	if t.err != nil {
		return fmt.Errorf("truth log: %w", t.err)
	}
	return nil
}
