package bench

import "servebench/record"

// WriteSweepEnd writes a sweep's conclusions after its last run's run-end line, and keeps
// them in the header in memory, as a reader of the file finds them.
func (b *Session) WriteSweepEnd(e *record.SweepEnd) error {
	if err := b.w.WriteSweepEnd(e); err != nil {
		return b.writeErr(err)
	}
	b.hdr.SweepEnd = e
	return b.flush()
}
