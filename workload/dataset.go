package workload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// DefaultMaxRecordBytes bounds one record of a dataset file (a JSONL or CSV line, or one item
// of a JSON array). A record past it is an error naming it: without a bound, a file with no
// newline (or a corrupt 2 GB line) would be read whole into memory before anything failed.
const DefaultMaxRecordBytes = 64 << 20

// InputError is a bad record in a dataset file. Its message is one line:
//
//	name:LINE: FIELD: problem                 (JSONL and CSV files)
//	name: item INDEX (byte OFFSET): FIELD: problem  (JSON arrays)
//
// FIELD is left out when the record as a whole is at fault.
type InputError struct {
	File   string // the name the reader was given (a path, usually)
	Line   int    // 1-based line number; 0 when the file is not line-based
	Item   int    // 0-based index in a top-level JSON array; meaningful when Line is 0
	Offset int64  // byte offset of the fault (of the comma before the item, when no closer one is known); -1 when unknown
	Field  string // the JSON field or CSV column at fault; "" for the whole record
	Err    error
}

// Error implements error.
func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	switch {
	case e.Line > 0:
		fmt.Fprintf(&b, ":%d: ", e.Line)
	case e.Offset >= 0:
		fmt.Fprintf(&b, ": item %d (byte %d): ", e.Item, e.Offset)
	default:
		fmt.Fprintf(&b, ": item %d: ", e.Item)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	// one line, always: a JSON error can quote the input, and the input can hold newlines
	b.WriteString(oneLine(e.Err.Error()))
	return b.String()
}

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// errRecordTooLong is the cause of an InputError for a record past the size bound.
var errRecordTooLong = errors.New("record too long")

func tooLong(max int) error {
	return fmt.Errorf("%w: longer than the %d-byte limit", errRecordTooLong, max)
}

// FileHash is the sha256 of a file's contents, as "sha256:HEX", read in a stream so that a
// dataset of any size costs constant memory (and bounded by DefaultMaxInputBytes). A reader
// of a dataset should hash it while parsing it (Input.Sum), which also works on a pipe.
func FileHash(path string) (string, error) {
	in, err := OpenInput(context.Background(), path, 0)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	defer in.Close()
	h, err := in.Sum()
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return h, nil
}

// DatasetID identifies the file a workload was read from, for the settings given to Hash:
// the same requests read from another file (or another version of it) hash differently.
type DatasetID struct {
	Format string `json:"format"` // "sharegpt", "mooncake", "burstgpt", "prompts", …
	File   string `json:"file"`   // base name only: the same file in another directory is the same dataset
	SHA256 string `json:"sha256"` // FileHash of the contents
}

// IdentifyFile returns the DatasetID of the file at path.
func IdentifyFile(format, path string) (DatasetID, error) {
	h, err := FileHash(path)
	if err != nil {
		return DatasetID{}, err
	}
	return DatasetID{Format: format, File: filepath.Base(path), SHA256: h}, nil
}

// lineReader reads lines of at most max bytes. bufio.Scanner has such a bound too, but its
// error does not say which line; this one counts lines so the caller can name it.
type lineReader struct {
	br   *bufio.Reader
	max  int
	buf  []byte
	line int // number of the line last returned, 1-based
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxRecordBytes
	}
	return &lineReader{br: bufio.NewReaderSize(r, min(64<<10, max+1)), max: max}
}

// next returns the next line without its "\n" or "\r\n"; the slice is valid until the next
// call. At the end it returns io.EOF; a line past the bound returns an error wrapping
// errRecordTooLong (the line number is then l.line).
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	l.line++
	if l.line == 1 {
		if b, _ := l.br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
			_, _ = l.br.Discard(len(utf8BOM)) // Excel's "CSV UTF-8" and Windows editors write one
		}
	}
	for {
		chunk, err := l.br.ReadSlice('\n')
		// the bound is on the line's content, its "\n" excluded
		if len(l.buf)+len(chunk)-boolInt(err == nil) > l.max {
			return nil, tooLong(l.max)
		}
		switch {
		case err == nil:
			if len(l.buf) == 0 {
				return trimEOL(chunk), nil // the common case: no copy
			}
			l.buf = append(l.buf, chunk...)
			return trimEOL(l.buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			l.buf = append(l.buf, chunk...)
		case errors.Is(err, io.EOF):
			l.buf = append(l.buf, chunk...)
			if len(l.buf) == 0 {
				return nil, io.EOF
			}
			return trimEOL(l.buf), nil
		default:
			return nil, err
		}
	}
}

func endsLine(b []byte) bool { return len(b) > 0 && b[len(b)-1] == '\n' }

func trimEOL(b []byte) []byte {
	b = b[:len(b)-boolInt(endsLine(b))]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// windowReader fails a read that would go past limit, which its user moves forward before
// each JSON value it decodes: json.Decoder buffers a whole value before decoding it, so this
// is what bounds the memory of one item of a JSON array.
type windowReader struct {
	r     io.Reader
	n     int64 // bytes read so far
	limit int64
	max   int
}

func (w *windowReader) Read(p []byte) (int, error) {
	if w.n >= w.limit {
		return 0, tooLong(w.max)
	}
	if int64(len(p)) > w.limit-w.n {
		p = p[:w.limit-w.n]
	}
	k, err := w.r.Read(p)
	w.n += int64(k)
	return k, err
}

// wordCount is the stand-in tokenizer when none is given: one token per whitespace-separated
// word, the assumption Synthetic makes too. Lengths measured with it are reported approximate.
var wordCount = TokenizerFunc(func(_ context.Context, text string) (int, error) {
	return len(strings.Fields(text)), nil
})

// orWords returns tok, or wordCount and exact=false when tok is nil.
func orWords(tok Tokenizer) (Tokenizer, bool) {
	if tok == nil {
		return wordCount, false
	}
	return tok, true
}

// mix64 is splitmix64's finaliser: a bijection of uint64 that scatters nearby inputs, used to
// derive per-item sampling keys and random streams from (seed, index) without state.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Random-stream domains: the same (seed, id) in two roles must not give the same words, or a
// trace's hash id 3 would share text with its request 3.
const (
	domainBlock  uint64 = 0x6d6f6f6e63616b65 // a trace's prefix block, by hash id
	domainTail   uint64 = 0x7461696c74616c6c // a trace request's unique part, by line
	domainPrefix uint64 = 0x7072656669787878 // a shared-prefix group's prefix
	domainSuffix uint64 = 0x7375666669787878 // a shared-prefix request's suffix
	domainOrder  uint64 = 0x6f72646572657272 // a shuffled order
)

// streamRNG is the random stream of (seed, domain, id): two calls with the same arguments
// draw the same sequence, so a shorter draw is a prefix of a longer one.
func streamRNG(seed int64, domain, id uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^domain, mix64(id^domain)))
}

// typeError says what a JSON type error says, in JSON's words (array, object, string,
// number), never a Go type: the file's author knows JSON, not our structs.
func typeError(typ *json.UnmarshalTypeError) error {
	found := strings.Replace(typ.Value, "bool", "true or false", 1)
	want := jsonKind(typ.Type)
	if num, ok := strings.CutPrefix(typ.Value, "number "); ok && want == "a whole number" {
		if f, err := strconv.ParseFloat(num, 64); err == nil && f == math.Trunc(f) {
			return fmt.Errorf("want a whole number that fits in 64 bits, found %s", num)
		}
		return fmt.Errorf("want a whole number, found %s", num)
	}
	return fmt.Errorf("want %s, found a JSON %s", want, found)
}

// jsonKind names a Go type as the JSON that decodes into it.
func jsonKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a JSON value"
}
