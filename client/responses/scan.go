package responses

import (
	"bytes"

	"servebench/jsonscan"
)

// The fast path for the events a stream is made of. encoding/json took 2-11 µs per text
// delta (it decodes into a struct by reflection and matches every key case-insensitively);
// at 100,000 events/s that is a core or more, and the load generator must never be the
// bottleneck. fastDelta walks the payload once with the shared validating scanner and
// decides a delta event by itself; anything else (lifecycle, terminal and error events, a key
// encoding/json would match differently, a repeated key) goes to encoding/json, which stays
// the definition of correct. FuzzFastDelta checks that the two agree wherever the fast path
// answers.

// fastDelta decodes a content delta event: ok is false when data is any other event or
// needs encoding/json; d says what its delta carries.
func fastDelta(data []byte) (d delta, ok bool) {
	s := jsonscan.Scanner{B: data, Known: knownBit, Folds: foldsToKnown}
	var typ, delta []byte
	other := false
	if !s.Object(func(key []byte) bool {
		start, ok := s.Value()
		switch string(key) {
		case "type":
			typ = s.B[start:s.I]
		case "delta":
			delta = s.B[start:s.I]
		case "error", "response":
			other = true // an error or terminal shape: the slow path decides
		}
		return ok
	}) {
		return d, false
	}
	s.WS()
	// the type is compared raw: a value with escapes matches no content type and falls back
	if s.I != len(s.B) || other || len(typ) < 2 || typ[0] != '"' || !contentTypes[string(typ[1:len(typ)-1])] {
		return d, false
	}
	t := string(typ[1 : len(typ)-1])
	return deltaOf(t, delta), true
}

// knownKeys are the top-level keys the slow path decodes, numbered for duplicate detection.
var knownKeys = []string{"type", "delta", "message", "code", "error", "response"}

func knownBit(key []byte) (uint, bool) {
	for i, k := range knownKeys {
		if string(key) == k {
			return uint(i), true
		}
	}
	return 0, false
}

// foldsToKnown reports a key that equals a known key case-insensitively but not exactly:
// encoding/json would decode it into that field.
func foldsToKnown(key []byte) bool {
	for _, k := range knownKeys {
		if len(k) == len(key) && string(key) != k && bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}
