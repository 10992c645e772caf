// Package ndjson reads newline-delimited JSON streams (Ollama's /api/generate and /api/chat).
//
// Like package sse it is built for the hot path: Next returns one line in a buffer reused by
// the next call. Lines are read with bufio.Reader.ReadSlice, so a line split across any
// number of network reads (a chunk boundary in the middle of an object, which Ollama and
// proxies in front of it produce) is assembled before it is returned, and there is no line
// length limit short of MaxLineSize.
package ndjson

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLineSize bounds one line, so a broken server cannot make the client buffer
// without limit.
const DefaultMaxLineSize = 16 << 20

// ErrLineTooLarge is returned when a line exceeds MaxLineSize.
var ErrLineTooLarge = errors.New("ndjson: line larger than the size limit")

// Reader reads lines of a NDJSON stream. The zero value is not usable; use NewReader.
type Reader struct {
	// MaxLineSize bounds one line; 0 means DefaultMaxLineSize.
	MaxLineSize int

	br           *bufio.Reader
	long         []byte // a line that did not fit in br's buffer
	unterminated bool   // the last line returned had no newline (input ended after it)
	err          error  // sticky error
}

// NewReader returns a Reader on r with a 64 KiB read buffer.
func NewReader(r io.Reader) *Reader { return &Reader{br: bufio.NewReaderSize(r, 64<<10)} }

// Reset discards all state and reads from r next, keeping the buffers.
func (r *Reader) Reset(rd io.Reader) {
	r.br.Reset(rd)
	r.long, r.unterminated, r.err = r.long[:0], false, nil
}

// Type returns nil: NDJSON has no event types. It lets a Reader stand where an SSE reader
// does.
func (r *Reader) Type() []byte { return nil }

// Unterminated reports whether the line last returned by Next ended at the end of input
// without a newline: complete if it parses, otherwise the stream was cut inside it.
func (r *Reader) Unterminated() bool { return r.unterminated }

// Next returns the next non-blank line without its LF or CRLF terminator and surrounding
// spaces. The slice is valid until the next call. At the end of input Next returns io.EOF; a
// last line without a newline is returned first (see Unterminated).
func (r *Reader) Next() ([]byte, error) {
	for r.err == nil {
		line, err := r.readLine()
		if err != nil && (err != io.EOF || len(line) == 0) {
			r.err = err
			break
		}
		r.unterminated = err == io.EOF
		if err == io.EOF {
			r.err = io.EOF
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
	}
	return nil, r.err
}

// readLine returns one line (without its newline) or, at the end of input, what is left.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.br.ReadSlice('\n')
			if len(r.long)+len(line) > r.maxSize() {
				return nil, ErrLineTooLarge
			}
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	if err == nil {
		line = line[:len(line)-1]
	}
	return line, err
}

func (r *Reader) maxSize() int {
	if r.MaxLineSize > 0 {
		return r.MaxLineSize
	}
	return DefaultMaxLineSize
}
