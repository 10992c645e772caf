package client

import (
	"context"
	"fmt"
	"io"
	"time"
)

// IdleTimer cancels a request when no bytes arrive for a while: a stalled stream must end as
// a timeout, not hang a user slot forever, and a per-request deadline cannot tell a long
// healthy stream from a dead one. A nil *IdleTimer (no idle timeout) is valid and does
// nothing.
//
// It is one runtime timer re-armed on every successful read, which costs far less than the
// read itself; the cancellation cause is ErrIdleTimeout (see ContextError).
type IdleTimer struct {
	d time.Duration
	t *time.Timer
}

// StartIdleTimer arms a timer that calls cancel with an ErrIdleTimeout cause after d without
// a Reset. It returns nil when d <= 0.
func StartIdleTimer(d time.Duration, cancel context.CancelCauseFunc) *IdleTimer {
	if d <= 0 {
		return nil
	}
	cause := fmt.Errorf("no bytes from the server for %v: %w", d, ErrIdleTimeout)
	return &IdleTimer{d: d, t: time.AfterFunc(d, func() { cancel(cause) })}
}

// Reset re-arms the timer: bytes (or headers) just arrived.
func (it *IdleTimer) Reset() {
	if it != nil {
		it.t.Reset(it.d)
	}
}

// Stop disarms the timer.
func (it *IdleTimer) Stop() {
	if it != nil {
		it.t.Stop()
	}
}

// Reader wraps r so that every read that returns bytes re-arms the timer.
func (it *IdleTimer) Reader(r io.Reader) io.Reader {
	if it == nil {
		return r
	}
	return &idleReader{r: r, it: it}
}

type idleReader struct {
	r  io.Reader
	it *IdleTimer
}

func (ir *idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.it.Reset()
	}
	return n, err
}
