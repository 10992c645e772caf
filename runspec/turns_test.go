package runspec

import (
	"errors"
	"strings"
	"testing"
)

// TestTurnsBounded: a --turns that would panic (a huge count) or build a quadratic history
// before the first request is a usage error naming the flag; a modest one passes.
func TestTurnsBounded(t *testing.T) {
	for _, c := range []struct {
		turns, requests int
		ok              bool
	}{
		{4611686018427387904, 3, false},
		{100000, 3, false},
		{1000, 3, false}, // under the turn cap, but 1e9 tokens of history
		{8, 3, true},
		{64, 20, true},
	} {
		s := Default()
		s.Turns, s.Requests = c.turns, c.requests
		s.MarkSet("turns", "requests")
		err := s.Validate()
		var ue *UsageError
		switch {
		case c.ok && err != nil:
			t.Errorf("--turns %d --requests %d: %v", c.turns, c.requests, err)
		case !c.ok && (!errors.As(err, &ue) || !strings.Contains(err.Error(), "--turns")):
			t.Errorf("--turns %d --requests %d: %v, want a usage error naming --turns", c.turns, c.requests, err)
		}
	}
}
