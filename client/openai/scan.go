package openai

import (
	"bytes"

	"servebench/jsonscan"
)

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

// scanner reads one JSON payload: the shared walker plus this decoder's fields.
type scanner struct{ jsonscan.Scanner }

// fast decodes data (already trimmed) into d.c, which the caller has reset. It reports false
// when the payload needs encoding/json; d.c is then in an unspecified state.
func (d *decoder) fast(data []byte) bool {
	s := scanner{jsonscan.Scanner{B: data, Known: knownBit, Folds: foldsToKnown}}
	if !s.Object(func(key []byte) bool { return s.chunkField(key, &d.c) }) {
		return false
	}
	return s.I == len(s.B)
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
		start, ok := s.Value()
		c.Object = objectKind(ok && string(s.B[start:s.I]) == `"error"`)
		return ok
	case "timings":
		return s.raw(&c.Timings)
	}
	_, ok := s.Value()
	return ok
}

// raw keeps a non-null value's bytes, as rawValue.UnmarshalJSON does.
func (s *scanner) raw(r *rawValue) bool {
	start, ok := s.Value()
	if ok && string(s.B[start:s.I]) != "null" {
		r.b, r.set = append(r.b[:0], s.B[start:s.I]...), true
	}
	return ok
}

// choices decodes null or an array of choice objects (or nulls).
func (s *scanner) choices(c *chunk) bool {
	if s.Null() {
		c.Choices = c.Choices[:0]
		return true
	}
	return s.Array(func() bool {
		c.Choices = append(c.Choices, choice{})
		ch := &c.Choices[len(c.Choices)-1]
		if s.Null() {
			return true
		}
		return s.Object(func(key []byte) bool {
			switch string(key) {
			case "text":
				return s.flag(&ch.Text)
			case "finish_reason":
				start, ok := s.Value()
				ch.FinishReason = finishOf(s.B[start:s.I])
				return ok
			case "delta":
				return s.delta(&ch.Delta)
			}
			_, ok := s.Value()
			return ok
		})
	})
}

var choiceKeys = []string{"text", "delta", "finish_reason"}

func (s *scanner) delta(dl *delta) bool {
	if s.Null() {
		return true
	}
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return s.flag(&dl.Content)
		case "reasoning_content":
			return s.flag(&dl.ReasoningContent)
		case "reasoning":
			return s.flag(&dl.Reasoning)
		case "tool_calls":
			start, ok := s.Value()
			dl.ToolCalls.set(s.B[start:s.I])
			return ok
		}
		_, ok := s.Value()
		return ok
	})
}

var deltaKeys = []string{"content", "reasoning_content", "reasoning", "tool_calls"}

// flag sets f as flag.UnmarshalJSON does: any value but null and "".
func (s *scanner) flag(f *flag) bool {
	start, ok := s.Value()
	v := string(s.B[start:s.I])
	*f = flag(ok && v != "null" && v != `""`)
	return ok
}

func (s *scanner) usage(u *usage) bool {
	if s.Null() {
		return true
	}
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return s.Int(&u.Prompt)
		case "completion_tokens":
			return s.Int(&u.Completion)
		case "total_tokens":
			return s.Int(&u.Total)
		case "prompt_tokens_details":
			return s.details(&u.Details)
		case "completion_tokens_details":
			return s.completionDetails(&u.CompDetails)
		}
		_, ok := s.Value()
		return ok
	})
}

// details decodes usage.prompt_tokens_details; null leaves it as it is (encoding/json's rule).
func (s *scanner) details(d *usageDetails) bool {
	if s.Null() {
		return true
	}
	return s.Object(func(key []byte) bool {
		if string(key) == "cached_tokens" {
			if s.Null() { // null is "not reported", as encoding/json's path reads it
				return true
			}
			d.hasCached = true
			return s.Int(&d.Cached)
		}
		_, ok := s.Value()
		return ok
	})
}

var (
	usageKeys   = []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details"}
	detailsKeys = []string{"cached_tokens"}
)

// keySets lists the known keys of each object kind; an unknown key that equals one of them
// but for case goes to encoding/json, which would match it.
var keySets = [][]string{chunkKeys, choiceKeys, deltaKeys, usageKeys, detailsKeys, completionDetailsKeys}

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
	case "prompt_tokens_details":
		return 14, true
	case "cached_tokens":
		return 15, true
	case "tool_calls":
		return 16, true
	case "completion_tokens_details":
		return 17, true
	case "reasoning_tokens":
		return 18, true
	}
	return 0, false
}
