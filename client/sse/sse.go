// Package sse reads Server-Sent Events (the text/event-stream format of the WHATWG HTML
// spec) as streamed by LLM inference servers.
//
// It is built for the hot path of a load generator: Next returns the data of one event in a
// buffer that is reused by the next call, so a steady stream costs no allocations. Lines are
// read with bufio.Reader.ReadSlice, so there is no line-length limit (bufio.Scanner's 64 KiB
// default limit silently broke long events in other tools); lines longer than the buffer are
// assembled in a second reused buffer.
//
// Deviations from the spec, all deliberate:
//   - a lone CR is not a line terminator (only LF and CRLF are); no inference server uses it
//     and supporting it would cost a byte-by-byte scan;
//   - at end of input, a pending event whose last line was complete is still dispatched
//     (the spec discards it); a server that closes right after "data: ...\n" has sent the
//     whole event, and dropping it would turn a complete stream into a truncated one;
//   - an "error" field is read as the data of an event of type "error" (the spec ignores
//     unknown fields). llama.cpp reports a failure inside a 200 stream as the line
//     `error: {"code":500,"message":"...","type":"server_error"}` (its native /completion
//     stream, and the OpenAI routes of older builds); ignoring it would lose the server's
//     message and turn a failed request into a merely truncated one. Every other unknown
//     field is still ignored, as the spec says.
package sse

import (
	"bufio"
	"errors"
	"io"
)

// DefaultBufferSize is the read buffer size of NewReader: large enough that a typical event
// is one ReadSlice, small enough to keep per-request memory modest under high concurrency.
const DefaultBufferSize = 64 << 10

// DefaultMaxEventSize bounds the data of one event, so a broken server cannot make the
// client buffer without limit.
const DefaultMaxEventSize = 16 << 20

// ErrEventTooLarge is returned when an event's data or a single line exceeds MaxEventSize.
var ErrEventTooLarge = errors.New("sse: event larger than the size limit")

// Reader reads events from an event stream. The zero value is not usable; use NewReader.
type Reader struct {
	// MaxEventSize bounds one event's data (and one line); 0 means DefaultMaxEventSize.
	MaxEventSize int

	br      *bufio.Reader
	data    []byte // data of the event being assembled; returned by Next
	typ     []byte // event type ("event:" field) of the event being assembled
	errLine bool   // the event has an "error:" field: its type is "error" whatever "event:" says
	long    []byte // a line that did not fit in br's buffer
	hasData bool   // at least one data field was seen (data may still be empty)
	started bool   // the first line was read (a UTF-8 BOM is only skipped there)
	err     error  // sticky end-of-input error, returned after the last event
}

// NewReader returns a Reader on r with a DefaultBufferSize read buffer.
func NewReader(r io.Reader) *Reader { return NewReaderSize(r, DefaultBufferSize) }

// NewReaderSize returns a Reader on r with a read buffer of at least size bytes.
func NewReaderSize(r io.Reader, size int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, size)}
}

// Reset discards all state and reads from r next, keeping the buffers: a pooled Reader
// serves many requests without allocating.
func (r *Reader) Reset(rd io.Reader) {
	r.br.Reset(rd)
	r.data, r.typ, r.long = r.data[:0], r.typ[:0], r.long[:0]
	r.hasData, r.started, r.errLine, r.err = false, false, false, nil
}

// Type returns the event type ("event:" field) of the event last returned by Next; empty
// means the default type, "message", and "error" also marks an event that had an "error:"
// field (see the package comment). Valid until the next call to Next.
func (r *Reader) Type() []byte { return r.typ }

// Next returns the data of the next event: its data fields (and "error:" fields) joined by
// "\n". Events without a data field (comments such as ": keep-alive", bare "event:" or "id:" blocks) are skipped.
// The returned slice is valid until the next call to Next or Reset.
//
// At the clean end of input Next returns io.EOF. When input ends in the middle of a line
// (the stream was cut), the partial line is discarded and Next returns io.ErrUnexpectedEOF.
// Read errors are returned as they come.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.data, r.typ, r.hasData, r.errLine = r.data[:0], r.typ[:0], false, false
	for {
		line, err := r.readLine()
		if err != nil {
			return r.end(err)
		}
		if len(line) == 0 { // blank line: end of event
			if r.hasData {
				return r.event(), nil
			}
			r.typ, r.errLine = r.typ[:0], false // an event without data is not dispatched (spec)
			continue
		}
		if err := r.field(line); err != nil {
			r.err = err
			return nil, err
		}
	}
}

// end handles the end of input or a read error while an event is being assembled.
func (r *Reader) end(err error) ([]byte, error) {
	r.err = err
	if err == io.EOF && r.hasData {
		return r.event(), nil // lenient: see the package comment
	}
	return nil, err
}

// event finishes the pending event: the spec appends "\n" after every data field and
// removes the last one at dispatch.
func (r *Reader) event() []byte {
	r.hasData = false
	return r.data[:len(r.data)-1]
}

// field interprets one non-empty line.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // comment, typically a keep-alive
	}
	name, value := line, line[len(line):]
	for i, c := range line {
		if c == ':' {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
			break
		}
	}
	switch string(name) { // no allocation: the compiler compares in place
	case "data":
		return r.appendData(value)
	case "error": // llama.cpp's failure line, see the package comment
		r.typ, r.errLine = append(r.typ[:0], "error"...), true
		return r.appendData(value)
	case "event":
		if !r.errLine {
			r.typ = append(r.typ[:0], value...)
		}
	}
	// "id" and "retry" only matter for reconnection, which a benchmark must not do.
	return nil
}

// appendData adds one data line to the pending event; the spec appends "\n" after each.
func (r *Reader) appendData(value []byte) error {
	if len(r.data)+len(value)+1 > r.maxSize() {
		return ErrEventTooLarge
	}
	r.data = append(r.data, value...)
	r.data = append(r.data, '\n')
	r.hasData = true
	return nil
}

// readLine returns the next line without its LF or CRLF terminator. The slice is valid until
// the next read. At end of input a complete last line is returned first, then io.EOF; an
// incomplete one is dropped and reported as io.ErrUnexpectedEOF.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		line, err = r.readLong(line)
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if !r.started {
		r.started = true
		if len(line) >= 3 && line[0] == 0xEF && line[1] == 0xBB && line[2] == 0xBF {
			line = line[3:]
		}
	}
	return line, nil
}

// readLong assembles a line longer than the read buffer in r.long.
func (r *Reader) readLong(first []byte) ([]byte, error) {
	r.long = append(r.long[:0], first...)
	for {
		part, err := r.br.ReadSlice('\n')
		if len(r.long)+len(part) > r.maxSize() {
			return nil, ErrEventTooLarge
		}
		r.long = append(r.long, part...)
		if err != bufio.ErrBufferFull {
			return r.long, err
		}
	}
}

func (r *Reader) maxSize() int {
	if r.MaxEventSize > 0 {
		return r.MaxEventSize
	}
	return DefaultMaxEventSize
}
