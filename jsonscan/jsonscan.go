// Package jsonscan is a small validating JSON walker for servebench's hot decoders: the
// per-event stream decoder (client/openai) and the records reader (record). It checks the
// grammar as it goes and reports false wherever encoding/json might decode differently
// (repeated or case-folded known keys, escaped keys, deep nesting), so that each caller can
// fall back to encoding/json, its oracle in fuzz tests. It imports only the standard library,
// so the record package may use it and still depend on nothing else of servebench's.
package jsonscan

import "bytes"

// MaxDepth bounds nesting on the fast path; deeper payloads go to encoding/json.
const MaxDepth = 64

// Scanner walks one JSON text B from offset I.
type Scanner struct {
	B     []byte
	I     int
	Depth int
	// Known gives each object key the caller decodes a bit (< 64), to refuse repeated keys;
	// Folds reports a key that equals a known one case-insensitively but not exactly
	// (encoding/json would match it). Both may be nil.
	Known func(key []byte) (uint, bool)
	Folds func(key []byte) bool
}

// WS skips whitespace.
func (s *Scanner) WS() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Next skips whitespace and consumes c.
func (s *Scanner) Next(c byte) bool {
	s.WS()
	if s.I < len(s.B) && s.B[s.I] == c {
		s.I++
		return true
	}
	return false
}

// Null consumes a null literal if one comes next.
func (s *Scanner) Null() bool {
	s.WS()
	if bytes.HasPrefix(s.B[s.I:], []byte("null")) {
		s.I += 4
		return true
	}
	return false
}

// Object reads an object, calling field for each key with s positioned before its value.
func (s *Scanner) Object(field func(key []byte) bool) bool {
	if !s.Next('{') || s.Depth >= MaxDepth {
		return false
	}
	s.Depth++
	if s.Next('}') {
		s.Depth--
		return true
	}
	var seen uint64
	for {
		key, ok := s.Key()
		if !ok || !s.Next(':') {
			return false
		}
		if bit, known := s.known(key); known {
			if seen&(1<<bit) != 0 {
				return false // a repeated key: encoding/json's merge rules apply
			}
			seen |= 1 << bit
		} else if s.Folds != nil && s.Folds(key) {
			return false
		}
		if !field(key) {
			return false
		}
		if s.Next('}') {
			s.Depth--
			return true
		}
		if !s.Next(',') {
			return false
		}
	}
}

// Key reads an object key that is plain ASCII without escapes.
func (s *Scanner) Key() ([]byte, bool) {
	if !s.Next('"') {
		return nil, false
	}
	start := s.I
	for ; s.I < len(s.B); s.I++ {
		switch c := s.B[s.I]; {
		case c == '"':
			s.I++
			return s.B[start : s.I-1], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// Array reads an array, calling elem with s positioned before each element.
func (s *Scanner) Array(elem func() bool) bool {
	if !s.Next('[') || s.Depth >= MaxDepth {
		return false
	}
	s.Depth++
	if s.Next(']') {
		s.Depth--
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.Next(']') {
			s.Depth--
			return true
		}
		if !s.Next(',') {
			return false
		}
	}
}

// Value skips one valid JSON value and returns where it started (after whitespace).
func (s *Scanner) Value() (int, bool) {
	s.WS()
	start := s.I
	if s.I >= len(s.B) {
		return start, false
	}
	var ok bool
	switch c := s.B[s.I]; {
	case c == '{':
		ok = s.Object(func([]byte) bool { _, ok := s.Value(); return ok })
	case c == '[':
		ok = s.Array(func() bool { _, ok := s.Value(); return ok })
	case c == '"':
		ok = s.Str()
	case c == '-' || (c >= '0' && c <= '9'):
		ok = s.Number()
	default:
		ok = s.Literal("true") || s.Literal("false") || s.Literal("null")
	}
	return start, ok
}

// Literal consumes lit if it comes next.
func (s *Scanner) Literal(lit string) bool {
	if bytes.HasPrefix(s.B[s.I:], []byte(lit)) {
		s.I += len(lit)
		return true
	}
	return false
}

// Str skips a string, checking its escapes and that it has no raw control characters.
// Invalid UTF-8 is accepted, as encoding/json accepts it.
func (s *Scanner) Str() bool {
	// Checked, not assumed: skipping whatever byte is here would accept abc" as a string, or
	// step past the end of B and make the next call panic.
	if s.I >= len(s.B) || s.B[s.I] != '"' {
		return false
	}
	s.I++
	for s.I < len(s.B) {
		c := s.B[s.I]
		s.I++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if !s.Escape() {
				return false
			}
		}
	}
	return false
}

// Escape checks one escape sequence after a backslash.
func (s *Scanner) Escape() bool {
	if s.I >= len(s.B) {
		return false
	}
	c := s.B[s.I]
	s.I++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if s.I+4 > len(s.B) {
			return false
		}
		for _, h := range s.B[s.I : s.I+4] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return false
			}
		}
		s.I += 4
		return true
	}
	return false
}

// Number skips -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) Number() bool {
	if s.I < len(s.B) && s.B[s.I] == '-' { // at the end of B: false, not an index panic
		s.I++
	}
	switch {
	case s.I < len(s.B) && s.B[s.I] == '0':
		s.I++
	case !s.Digits():
		return false
	}
	if s.I < len(s.B) && s.B[s.I] == '.' {
		s.I++
		if !s.Digits() {
			return false
		}
	}
	if s.I < len(s.B) && (s.B[s.I] == 'e' || s.B[s.I] == 'E') {
		s.I++
		if s.I < len(s.B) && (s.B[s.I] == '+' || s.B[s.I] == '-') {
			s.I++
		}
		if !s.Digits() {
			return false
		}
	}
	return true
}

// Digits consumes one or more decimal digits.
func (s *Scanner) Digits() bool {
	start := s.I
	for s.I < len(s.B) && s.B[s.I] >= '0' && s.B[s.I] <= '9' {
		s.I++
	}
	return s.I > start
}

func (s *Scanner) known(key []byte) (uint, bool) {
	if s.Known == nil {
		return 0, false
	}
	return s.Known(key)
}

// Int64 decodes null (v unchanged) or a plain integer of at most 18 digits, so it cannot
// overflow; a fraction, an exponent or a leading zero is false (encoding/json decides those).
func (s *Scanner) Int64(v *int64) bool {
	if s.Null() {
		return true
	}
	s.WS()
	i, neg := s.I, false
	if i < len(s.B) && s.B[i] == '-' {
		neg, i = true, i+1
	}
	start := i
	var n int64
	for ; i < len(s.B) && s.B[i] >= '0' && s.B[i] <= '9'; i++ {
		n = n*10 + int64(s.B[i]-'0')
	}
	digits := i - start
	if digits == 0 || digits > 18 || (digits > 1 && s.B[start] == '0') {
		return false
	}
	if i < len(s.B) && (s.B[i] == '.' || s.B[i] == 'e' || s.B[i] == 'E') {
		return false
	}
	if neg {
		n = -n
	}
	*v, s.I = n, i
	return true
}

// Int is Int64 into an int. Where int has 32 bits, an integer it cannot hold is false (the
// caller's encoding/json reports the overflow) rather than silently truncated.
func (s *Scanner) Int(v *int) bool {
	n := int64(*v)
	if !s.Int64(&n) || int64(int(n)) != n {
		return false
	}
	*v = int(n)
	return true
}
