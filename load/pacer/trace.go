package pacer

import (
	"bufio"
	"encoding/json"
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

// ReadTrace reads a JSONL trace. Offsets must be finite, not negative and never decrease: a
// trace is replayed exactly, so a file out of order is an error (naming its line) rather than
// silently re-sorted.
func ReadTrace(r io.Reader, name string) ([]Arrival, error) {
	var out []Arrival
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var a Arrival
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		switch {
		case a.T < 0 || math.IsInf(a.T, 0) || math.IsNaN(a.T):
			return nil, fmt.Errorf("%s:%d: offset %v must be a non-negative number of seconds", name, line, a.T)
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
