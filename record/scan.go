package record

import "bytes"

// The JSON grammar half of the fast record decoder (decode.go): whitespace, objects with
// duplicate and case-fold checks on known keys, arrays, and validated skipping of any value.
// client/openai has the same walker for stream chunks; each package keeps its own copy
// because record imports nothing internal and the two evolve with their own formats.

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips whitespace and consumes c.
func (s *scanner) next(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// null consumes a null literal if one comes next.
func (s *scanner) null() bool {
	s.ws()
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// object reads an object, calling field for each key with s positioned before its value.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.next('{') || s.depth >= maxDepth {
		return false
	}
	s.depth++
	if s.next('}') {
		s.depth--
		return true
	}
	var seen uint64
	for {
		key, ok := s.key()
		if !ok || !s.next(':') {
			return false
		}
		if bit, known := knownBit(key); known {
			if seen&(1<<bit) != 0 {
				return false // a repeated key: encoding/json's merge rules apply
			}
			seen |= 1 << bit
		} else if foldsToKnown(key) {
			return false
		}
		if !field(key) {
			return false
		}
		if s.next('}') {
			s.depth--
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// key reads an object key that is plain ASCII without escapes.
func (s *scanner) key() ([]byte, bool) {
	if !s.next('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// array reads an array, calling elem with s positioned before each element.
func (s *scanner) array(elem func() bool) bool {
	if !s.next('[') || s.depth >= maxDepth {
		return false
	}
	s.depth++
	if s.next(']') {
		s.depth--
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.next(']') {
			s.depth--
			return true
		}
		if !s.next(',') {
			return false
		}
	}
}

// value skips one valid JSON value and returns where it started (after whitespace).
func (s *scanner) value() (int, bool) {
	s.ws()
	start := s.i
	if s.i >= len(s.b) {
		return start, false
	}
	var ok bool
	switch c := s.b[s.i]; {
	case c == '{':
		ok = s.object(func([]byte) bool { _, ok := s.value(); return ok })
	case c == '[':
		ok = s.array(func() bool { _, ok := s.value(); return ok })
	case c == '"':
		ok = s.str()
	case c == '-' || (c >= '0' && c <= '9'):
		ok = s.number()
	default:
		ok = s.literal("true") || s.literal("false") || s.literal("null")
	}
	return start, ok
}

func (s *scanner) literal(lit string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.i += len(lit)
		return true
	}
	return false
}

// str skips a string, checking its escapes and that it has no raw control characters.
// Invalid UTF-8 is accepted, as encoding/json accepts it.
func (s *scanner) str() bool {
	s.i++ // the opening quote
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if !s.escape() {
				return false
			}
		}
	}
	return false
}

func (s *scanner) escape() bool {
	if s.i >= len(s.b) {
		return false
	}
	c := s.b[s.i]
	s.i++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if s.i+4 > len(s.b) {
			return false
		}
		for _, h := range s.b[s.i : s.i+4] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return false
			}
		}
		s.i += 4
		return true
	}
	return false
}

// number skips -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case !s.digits():
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits consumes one or more decimal digits.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}
