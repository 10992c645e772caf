package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A records file is one run, or the several runs it says it holds: a run writer (bench) writes
// the header once, then each run's records (Record.Run = 0, 1, … for --repeat runs and sweep
// points), each run finished (its run-end line written) before the next begins. So in a file
// servebench wrote, run indexes never go back, and a request ID (with its run index, the
// X-Request-Id "<run>-<id>") occurs once. A file that breaks either rule, or holds a second
// header, is not one servebench run — two files concatenated (`cat a.jsonl b.jsonl`), every
// line written twice, an edit — and pooling its records would report one run of twice the
// requests without a word. The Reader refuses it with a *RunError instead.

// RunError is a records-file line that shows the file is not what one servebench run wrote:
// a second header, a request ID that occurs twice in one run, or a run index that goes back.
// Unlike a *LineError (a cut or corrupt line, skipped by readers), reading cannot go on: every
// later Read returns it again.
type RunError struct {
	Line int
	Err  error
}

func (e *RunError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *RunError) Unwrap() error { return e.Err }

// headerPrefix starts every header line the Writer writes.
const headerPrefix = `{"servebench_header":`

// isHeader reports whether line is a header line: one Writer wrote (the prefix), or one with
// other spacing that decodes as a header (checked only for a line that is no record).
func isHeader(line []byte, decoded bool) bool {
	if bytes.HasPrefix(line, []byte(headerPrefix)) {
		return true
	}
	if decoded {
		return false
	}
	var hl headerLine
	return json.Unmarshal(line, &hl) == nil && hl.Header != nil
}

// errSecondHeader says what a second header means and what to do.
var errSecondHeader = errors.New("a second header: this file holds more than one records file " +
	"(files joined with cat?); report each file on its own, or draw two over each other with report --format html A B")

// runCheck follows the run indexes and request IDs of a file's records.
type runCheck struct {
	started bool
	run     int   // the run index of the records read last
	ids     idSet // the request IDs of run met so far
}

// check checks rec, read from line, against the records before it.
func (c *runCheck) check(rec *Record) error {
	switch {
	case rec.Run < 0:
		return fmt.Errorf("run index %d: runs are numbered from 0", rec.Run)
	case c.started && rec.Run < c.run:
		return fmt.Errorf("run index goes back from %d to %d (request %d): servebench writes one run after another, "+
			"so this file is not what one run wrote (files joined with cat?)", c.run, rec.Run, rec.ID)
	case !c.started || rec.Run > c.run:
		c.started, c.run = true, rec.Run
		c.ids.reset()
	}
	if !c.ids.add(rec.ID) {
		return fmt.Errorf("request %d of run %d occurs twice: a records file holds each request once "+
			"(records written twice, or files joined with cat?)", rec.ID, rec.Run)
	}
	return nil
}

// idSet is a set of request IDs: a bitmap for the usual small non-negative IDs (an index
// into the workload: 1 bit per ID up to idBits), a map for any other.
type idSet struct {
	bits  []uint64
	other map[int]struct{}
}

// idBits bounds the bitmap (2 MiB): a hostile ID of 1e18 goes to the map, not into memory.
const idBits = 1 << 24

func (s *idSet) reset() {
	clear(s.bits)
	s.other = nil
}

// add adds id and reports whether it was new.
func (s *idSet) add(id int) bool {
	if id >= 0 && id < idBits {
		w := id / 64
		if w >= len(s.bits) {
			s.bits = append(s.bits, make([]uint64, w+1-len(s.bits)+len(s.bits)/2)...)
		}
		m := uint64(1) << (id % 64)
		had := s.bits[w]&m != 0
		s.bits[w] |= m
		return !had
	}
	if s.other == nil {
		s.other = map[int]struct{}{}
	}
	if _, had := s.other[id]; had {
		return false
	}
	s.other[id] = struct{}{}
	return true
}
