package bench

import (
	"context"
	"time"
)

// waitStart waits until --start-at (runspec/startat.go), so that the shards of a split run
// start their clocks and schedules at one wall-clock instant, and records the instant in the
// header. A session ready only after the instant starts at once and says by how much it is
// late: the merge reports the resulting skew. A cancelled ctx (Ctrl-C) ends the session
// before its header is written: nothing was measured, and the records file is removed.
func (b *Session) waitStart(ctx context.Context) error {
	at := b.spec.StartTime()
	if at.IsZero() {
		return nil
	}
	b.hdr.StartAt = at.UTC()
	d := time.Until(at) // at has no monotonic reading: the wall clock decides, as across machines
	if d <= 0 {
		b.logf("--start-at %s: ready %v after it, starting now", at.UTC().Format(time.RFC3339Nano), (-d).Round(time.Millisecond))
		return nil
	}
	b.logf("--start-at: waiting %v, until %s", d.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		b.Abort()
		b.out = nil // removed: Close has nothing to put in place
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
