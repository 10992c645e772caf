package openai

import "bytes"

// The fast path of event decoding. encoding/json costs about 2 µs per chunk (reflection,
// per-field lookups, an Unmarshaler call per flag), which at 100,000 events/s is a fifth of a
// core: the client would become the bottleneck it must never be. This scanner walks the
// payload once, validating it as JSON and filling the same chunk struct, in ~0.2 µs.
//
// It only handles what it can decode exactly as encoding/json would; anything else makes it
// give up (return false), and the caller decodes the payload with encoding/json, which stays
// the definition of correct: keys with escapes or non-ASCII bytes or differing only in case
// from a known key (encoding/json matches case-insensitively), a known key given twice, usage
// counts that are not plain integers, a known field of the wrong type, and very deep nesting.
// FuzzFastDecode checks that whenever the scanner succeeds, encoding/json agrees.

// maxDepth bounds nesting on the fast path; deeper payloads go to encoding/json.
const maxDepth = 64

// scanner reads one JSON payload.
type scanner struct {
	b     []byte
	i     int
	depth int
}

// fast decodes data (already trimmed) into d.c, which the caller has reset. It reports false
// when the payload needs encoding/json; d.c is then in an unspecified state.
func (d *decoder) fast(data []byte) bool {
	s := scanner{b: data}
	if !s.object(func(key []byte) bool { return s.chunkField(key, &d.c) }) {
		return false
	}
	return s.i == len(s.b)
}

// Top-level keys of a chunk, as bits for duplicate detection.
var chunkKeys = []string{"choices", "usage", "error", "object", "timings"}

// chunkField decodes the value of top-level key.
func (s *scanner) chunkField(key []byte, c *chunk) bool {
	switch string(key) {
	case "choices":
		return s.choices(c)
	case "usage":
		return s.usage(&c.Usage)
	case "error":
		return s.raw(&c.Error)
	case "object":
		start, ok := s.value()
		c.Object = objectKind(ok && string(s.b[start:s.i]) == `"error"`)
		return ok
	case "timings":
		return s.raw(&c.Timings)
	}
	_, ok := s.value()
	return ok
}

// raw keeps a non-null value's bytes, as rawValue.UnmarshalJSON does.
func (s *scanner) raw(r *rawValue) bool {
	start, ok := s.value()
	if ok && string(s.b[start:s.i]) != "null" {
		r.b, r.set = append(r.b[:0], s.b[start:s.i]...), true
	}
	return ok
}

// choices decodes null or an array of choice objects (or nulls).
func (s *scanner) choices(c *chunk) bool {
	if s.null() {
		c.Choices = c.Choices[:0]
		return true
	}
	return s.array(func() bool {
		c.Choices = append(c.Choices, choice{})
		ch := &c.Choices[len(c.Choices)-1]
		if s.null() {
			return true
		}
		return s.object(func(key []byte) bool {
			switch string(key) {
			case "text":
				return s.flag(&ch.Text)
			case "finish_reason":
				return s.flag(&ch.FinishReason)
			case "delta":
				return s.delta(&ch.Delta)
			}
			_, ok := s.value()
			return ok
		})
	})
}

var choiceKeys = []string{"text", "delta", "finish_reason"}

func (s *scanner) delta(dl *delta) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return s.flag(&dl.Content)
		case "reasoning_content":
			return s.flag(&dl.ReasoningContent)
		case "reasoning":
			return s.flag(&dl.Reasoning)
		}
		_, ok := s.value()
		return ok
	})
}

var deltaKeys = []string{"content", "reasoning_content", "reasoning"}

// flag sets f as flag.UnmarshalJSON does: any value but null and "".
func (s *scanner) flag(f *flag) bool {
	start, ok := s.value()
	v := string(s.b[start:s.i])
	*f = flag(ok && v != "null" && v != `""`)
	return ok
}

func (s *scanner) usage(u *usage) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return s.int(&u.Prompt)
		case "completion_tokens":
			return s.int(&u.Completion)
		case "total_tokens":
			return s.int(&u.Total)
		}
		_, ok := s.value()
		return ok
	})
}

var usageKeys = []string{"prompt_tokens", "completion_tokens", "total_tokens"}

// int decodes null (no change) or a plain integer of at most 18 digits (no overflow).
func (s *scanner) int(v *int) bool {
	if s.null() {
		return true
	}
	s.ws()
	i, neg := s.i, false
	if i < len(s.b) && s.b[i] == '-' {
		neg, i = true, i+1
	}
	start, n := i, 0
	for ; i < len(s.b) && s.b[i] >= '0' && s.b[i] <= '9'; i++ {
		n = n*10 + int(s.b[i]-'0')
	}
	digits := i - start
	if digits == 0 || digits > 18 || (digits > 1 && s.b[start] == '0') {
		return false
	}
	if i < len(s.b) && (s.b[i] == '.' || s.b[i] == 'e' || s.b[i] == 'E') {
		return false // a fraction or exponent: encoding/json's error, not ours
	}
	if neg {
		n = -n
	}
	*v, s.i = n, i
	return true
}

// keySets lists the known keys of each object kind; an unknown key that equals one of them
// but for case goes to encoding/json, which would match it.
var keySets = [][]string{chunkKeys, choiceKeys, deltaKeys, usageKeys}

// foldsToKnown reports whether key equals a known key case-insensitively but not exactly.
// Known keys are lower case, so a key without upper-case letters can only match exactly.
func foldsToKnown(key []byte) bool {
	upper := false
	for _, c := range key {
		upper = upper || (c >= 'A' && c <= 'Z')
	}
	if !upper {
		return false
	}
	for _, set := range keySets {
		for _, k := range set {
			if len(k) == len(key) && string(key) != k && bytes.EqualFold(key, []byte(k)) {
				return true
			}
		}
	}
	return false
}

// knownBit numbers every known key for duplicate detection within one object (a switch on
// the string: a map lookup was a third of the scanner's time).
func knownBit(key []byte) (uint, bool) {
	switch string(key) {
	case "choices":
		return 0, true
	case "usage":
		return 1, true
	case "error":
		return 2, true
	case "object":
		return 3, true
	case "timings":
		return 4, true
	case "text":
		return 5, true
	case "delta":
		return 6, true
	case "finish_reason":
		return 7, true
	case "content":
		return 8, true
	case "reasoning_content":
		return 9, true
	case "reasoning":
		return 10, true
	case "prompt_tokens":
		return 11, true
	case "completion_tokens":
		return 12, true
	case "total_tokens":
		return 13, true
	}
	return 0, false
}

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
