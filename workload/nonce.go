package workload

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
)

// A per-invocation nonce. Seeded prompts are reproducible: the same seed and settings give
// the same text. That is also their danger: a second invocation with the default seed sends
// the text the first one sent, and a server with a prefix cache serves it from the cache, so
// the second measures cache hits, not prefill. Each invocation therefore draws a nonce from
// the operating system's randomness and mixes it into the words of every prompt it generates
// (never into their lengths, which stay the seed's: two invocations with the same seed send
// prompts of the same lengths and different text). The records header keeps the nonce, so
// the text can still be rebuilt exactly.

// NewNonce draws a nonce, never 0 (0 means none).
func NewNonce() uint64 {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic(fmt.Sprintf("crypto/rand: %v", err)) // Read never fails on supported platforms
		}
		if n := binary.LittleEndian.Uint64(b[:]); n != 0 {
			return n
		}
	}
}

// FormatNonce is the nonce as a header keeps it: 16 lower-case hex digits, "" for none.
func FormatNonce(n uint64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%016x", n)
}

// ParseNonce reads FormatNonce's form ("" is none).
func ParseNonce(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	if !validNonce(s) {
		return 0, fmt.Errorf("nonce %q: want 16 hex digits, not all zero", s)
	}
	return strconv.ParseUint(s, 16, 64)
}

// validNonce reports whether s is 16 hex digits, not all zero.
func validNonce(s string) bool {
	if len(s) != 16 {
		return false
	}
	n, err := strconv.ParseUint(s, 16, 64)
	return err == nil && n != 0
}

// textSeed is the seed of a generator's text streams under nonce: seed itself for none.
func textSeed(seed int64, nonce uint64) int64 {
	if nonce == 0 {
		return seed
	}
	return seed ^ int64(mix64(nonce))
}
