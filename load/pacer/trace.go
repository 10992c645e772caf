package pacer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// Trace replays recorded arrivals: request n is due at Offsets[n] exactly, and the schedule
// ends after the last one.
type Trace struct {
	Offsets []time.Duration
}

// Due implements Pacer.
func (t Trace) Due(n int) (time.Duration, bool) {
	if n < 0 || n >= len(t.Offsets) {
		return 0, false
	}
	return t.Offsets[n], true
}

// Arrival is one line of a trace file: {"t": 1.25} (seconds since the run start), optionally
// with the request's lengths {"t": 1.25, "input_tokens": 512, "output_tokens": 128}.
type Arrival struct {
	T            float64 `json:"t"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
}

// MaxTraceSeconds bounds a trace's offsets: a year, longer than any published trace; past it
// an offset would come near time.Duration's 292 years, and a corrupt one must be an error
// naming its line, not a schedule that wraps around.
const MaxTraceSeconds = 366 * 24 * 3600

// maxTokens bounds a trace line's lengths: no model has a longer context.
const maxTokens = 1 << 24

// jsonWords says a JSON type error in JSON's words rather than Go's.
func jsonWords(err error) error {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		want := "a number"
		if typ.Field != "t" {
			want = "a whole number"
		}
		return fmt.Errorf("%q: want %s, found a JSON %s", typ.Field, want, typ.Value)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// ReadTrace reads a JSONL trace. Offsets must be finite, not negative and never decrease: a
// trace is replayed exactly, so a file out of order is an error (naming its line) rather than
// silently re-sorted.
func ReadTrace(r io.Reader, name string) ([]Arrival, error) {
	var out []Arrival
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF")) // a UTF-8 BOM, as Windows editors write
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var a Arrival
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, jsonWords(err))
		}
		switch {
		case a.T < 0 || math.IsInf(a.T, 0) || math.IsNaN(a.T):
			return nil, fmt.Errorf("%s:%d: offset %v must be a non-negative number of seconds", name, line, a.T)
		case a.T > MaxTraceSeconds:
			return nil, fmt.Errorf("%s:%d: offset %v s is more than a year (%v s) after the start", name, line, a.T, MaxTraceSeconds)
		case a.InputTokens > maxTokens || a.OutputTokens > maxTokens:
			return nil, fmt.Errorf("%s:%d: a token count over the %d-token limit", name, line, maxTokens)
		case len(out) > 0 && a.T < out[len(out)-1].T:
			return nil, fmt.Errorf("%s:%d: offset %v s is before the previous line's %v s", name, line, a.T, out[len(out)-1].T)
		case a.InputTokens < 0 || a.OutputTokens < 0:
			return nil, fmt.Errorf("%s:%d: negative token count", name, line)
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no arrivals", name)
	}
	return out, nil
}

// NewTrace is the pacer that replays arrivals.
func NewTrace(as []Arrival) Trace {
	t := Trace{Offsets: make([]time.Duration, len(as))}
	for i, a := range as {
		t.Offsets[i] = time.Duration(math.Round(a.T * float64(time.Second)))
	}
	return t
}
