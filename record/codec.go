package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MarshalJSON writes an event as the compact pair [t, n].
func (e Event) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 32)
	return e.appendJSON(b), nil
}

func (e Event) appendJSON(b []byte) []byte {
	b = append(b, '[')
	b = strconv.AppendInt(b, e.T, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(e.N), 10)
	return append(b, ']')
}

// UnmarshalJSON reads the pair [t, n].
func (e *Event) UnmarshalJSON(b []byte) error {
	var p [2]int64
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("event: %w", err)
	}
	e.T, e.N = p[0], int32(p[1])
	return nil
}

// headerLine wraps the header so that a reader can tell it from a record at a glance.
type headerLine struct {
	Header *Header `json:"servebench_header"`
}

// Writer writes a records file. It is not safe for concurrent use: one writer goroutine
// owns it (docs/design/ARCHITECTURE.md).
type Writer struct {
	w       *bufio.Writer
	buf     bytes.Buffer
	enc     *json.Encoder
	line    []byte // the record line being built, reused
	secrets [][]byte
	mark    []byte
}

// Redact makes the writer replace every occurrence of each secret in every line it writes
// (as the raw bytes and as the writer's own JSON string form of it) with mark: the last guard,
// for a secret that a server reflected into something it reports (a model id, a label, an
// error) where no field-by-field redaction looked.
func (w *Writer) Redact(mark string, secrets ...string) {
	w.mark = []byte(mark)
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		w.secrets = append(w.secrets, []byte(sec))
		// every line is encoded by w.enc (HTML left unescaped) or appendString over it
		if q := appendString(nil, sec, &w.buf, w.enc); string(q[1:len(q)-1]) != sec {
			w.secrets = append(w.secrets, q[1:len(q)-1])
		}
	}
}

// RedactedHeader is h with every secret replaced as Writer.Redact replaces it in the header
// line (a server may reflect a credential into what it says about itself: its model id, its
// conditions), or h itself when none occurs. The fields that are not part of the line (Ends,
// Telemetry, SweepEnd) and Start's monotonic reading are kept.
func RedactedHeader(h *Header, mark string, secrets ...string) (*Header, error) {
	if len(secrets) == 0 {
		return h, nil
	}
	var plain, red bytes.Buffer
	pw, rw := NewWriter(&plain), NewWriter(&red)
	rw.Redact(mark, secrets...)
	for _, w := range []*Writer{pw, rw} {
		if err := w.WriteHeader(h); err != nil {
			return nil, err
		}
		if err := w.Flush(); err != nil {
			return nil, err
		}
	}
	if bytes.Equal(plain.Bytes(), red.Bytes()) {
		return h, nil
	}
	rd, err := NewReader(&red)
	if err != nil {
		return nil, fmt.Errorf("redacted header: %w", err)
	}
	out := *rd.Header()
	out.Ends, out.Telemetry, out.SweepEnd, out.Start = h.Ends, h.Telemetry, h.SweepEnd, h.Start
	return &out, nil
}

// redact is line with every secret replaced; line itself when none occurs.
func (w *Writer) redact(line []byte) []byte {
	for _, sec := range w.secrets {
		if bytes.Contains(line, sec) {
			line = bytes.ReplaceAll(line, sec, w.mark)
		}
	}
	return line
}

// NewWriter returns a Writer on w with a 256 KiB buffer.
func NewWriter(w io.Writer) *Writer {
	wr := &Writer{w: bufio.NewWriterSize(w, 256<<10)}
	wr.enc = json.NewEncoder(&wr.buf)
	wr.enc.SetEscapeHTML(false)
	return wr
}

// WriteHeader writes the header line. Call it once, first.
func (w *Writer) WriteHeader(h *Header) error {
	if h.Schema == 0 {
		h.Schema = SchemaVersion
	}
	return w.encode(headerLine{h})
}

// Write writes one record line.
func (w *Writer) Write(r *Record) error {
	var err error
	w.line, err = appendRecord(w.line[:0], r, &w.buf, w.enc)
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	_, err = w.w.Write(w.redact(w.line))
	return err
}

func (w *Writer) encode(v any) error {
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	_, err := w.w.Write(w.redact(w.buf.Bytes()))
	return err
}

// Flush writes buffered lines to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

// LineError is a records-file line that could not be read. Lines before it are valid.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ErrNoHeader is returned when a file does not start with a servebench header.
var ErrNoHeader = errors.New("not a servebench records file (no header on line 1)")

// Reader reads a records file line by line, streaming: memory does not grow with the file.
type Reader struct {
	r    *bufio.Reader
	line int
	hdr  *Header
	runs runCheck // runcheck.go
	err  error    // a *RunError, returned by every Read after it
}

// NewReader reads and checks the header line.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{r: bufio.NewReaderSize(r, 256<<10)}
	b, err := rd.next()
	if err != nil {
		if err == io.EOF {
			return nil, ErrNoHeader
		}
		return nil, err
	}
	var hl headerLine
	if err := json.Unmarshal(b, &hl); err != nil || hl.Header == nil {
		return nil, ErrNoHeader
	}
	if hl.Header.Schema > SchemaVersion {
		return nil, fmt.Errorf("records schema %d is newer than this servebench reads (%d): upgrade servebench", hl.Header.Schema, SchemaVersion)
	}
	rd.hdr = hl.Header
	return rd, nil
}

// Header returns the file's header.
func (r *Reader) Header() *Header { return r.hdr }

// Line returns the number of the line last read (1 is the header).
func (r *Reader) Line() int { return r.line }

// Read decodes the next record into rec, reusing its Events slice. It returns io.EOF at the
// end, and a *LineError for a line that is not a valid record (for example the cut last line
// of an interrupted run); the caller may stop there, every earlier record being valid. A
// *RunError (a second header, a request twice, a run index that goes back: runcheck.go) ends
// the reading: the file is not what one servebench run wrote.
func (r *Reader) Read(rec *Record) error {
	if r.err != nil {
		return r.err
	}
	err := r.read(rec)
	var re *RunError
	if errors.As(err, &re) {
		r.err = err
	}
	return err
}

func (r *Reader) read(rec *Record) error {
	for {
		b, err := r.next()
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if bytes.HasPrefix(b, []byte(runEndPrefix)) {
			var el runEndLine
			if err := json.Unmarshal(b, &el); err != nil || el.End == nil {
				return &LineError{Line: r.line, Err: fmt.Errorf("run end: %v", errOr(err))}
			}
			r.hdr.Ends = append(r.hdr.Ends, *el.End)
			continue
		}
		if bytes.HasPrefix(b, []byte(sweepEndPrefix)) { // sweepend.go
			if err := r.readSweepEnd(b); err != nil {
				return err
			}
			continue
		}
		if isHeader(b, true) {
			return &RunError{Line: r.line, Err: errSecondHeader}
		}
		if bytes.HasPrefix(b, []byte(spansPrefix)) { // spans.go
			if err := r.readSpans(b); err != nil {
				return err
			}
			continue
		}
		if bytes.HasPrefix(b, []byte(telemetryPrefix)) { // telemetry.go
			if err := r.readTelemetry(b); err != nil {
				return err
			}
			continue
		}
		ev := rec.Events[:0]
		*rec = Record{Events: ev}
		if !decodeFast(b, rec) { // decode.go; json.Unmarshal is the fallback and the oracle
			*rec = Record{Events: ev}
			if err := json.Unmarshal(b, rec); err != nil {
				return &LineError{Line: r.line, Err: err}
			}
		}
		if rec.Phase == "" {
			if isHeader(b, false) {
				return &RunError{Line: r.line, Err: errSecondHeader}
			}
			return &LineError{Line: r.line, Err: errors.New("record has no phase")}
		}
		if err := r.runs.check(rec); err != nil {
			return &RunError{Line: r.line, Err: err}
		}
		return nil
	}
}

func (r *Reader) next() ([]byte, error) {
	b, err := r.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// a line longer than the buffer (256 KiB): gather it whole, if it can be a line of a
		// records file at all, and only up to the bound
		if !opensObject(b) {
			if r.line == 0 {
				return nil, ErrNoHeader
			}
			return nil, &RunError{Line: r.line + 1, Err: errors.New("a line of more than 256 KiB that is not a JSON object: not a records file line")}
		}
		limit := MaxLineBytes
		if r.line == 0 {
			limit = MaxHeaderLineBytes
		}
		full := append([]byte(nil), b...)
		for err == bufio.ErrBufferFull {
			if len(full) > limit {
				return nil, &RunError{Line: r.line + 1, Err: fmt.Errorf("a line longer than %d MiB: not a records file line", limit>>20)}
			}
			b, err = r.r.ReadSlice('\n')
			full = append(full, b...)
		}
		b = full
	}
	if err == io.EOF && len(b) > 0 {
		err = nil
		r.line++
		// a final line without newline: an interrupted write, unless it parses
		return b, nil
	}
	if err != nil {
		return nil, err
	}
	r.line++
	return b, nil
}

// Line bounds of a records file. A record holds one request's observations (a million
// output tokens' events are about 20 MB); a header can embed a whole workload's prompts (a
// dataset of up to workload.DefaultMaxInputBytes, 8 GiB, as JSON). A longer line, or a long one
// that does not open a JSON object (/dev/zero), is no records file's: reading it whole would
// take memory without bound.
const (
	MaxLineBytes       = 1 << 30
	MaxHeaderLineBytes = 16 << 30
)

// opensObject reports whether b, the start of a line, opens a JSON object: '{' after any
// spaces.
func opensObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r")
	return len(b) > 0 && b[0] == '{'
}

func errOr(err error) error {
	if err != nil {
		return err
	}
	return errors.New("empty")
}
