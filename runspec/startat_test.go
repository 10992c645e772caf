package runspec

import (
	"strings"
	"testing"
	"time"
)

func TestStartAt(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		v, want string // want: "" valid, else a word of the one-line error
	}{
		{"", ""},
		{"+30s", ""},
		{"+23h59m", ""},
		{now.Add(time.Minute).UTC().Format(time.RFC3339), ""},
		{now.Add(time.Minute).Format(time.RFC3339Nano), ""}, // a zone offset is fine
		{"+0s", "RFC 3339"},
		{"+-5s", "RFC 3339"},
		{"+soon", "RFC 3339"},
		{"30s", "RFC 3339"}, // a duration needs its +
		{"2026-13-01T00:00:00Z", "RFC 3339"},
		{"tomorrow", "RFC 3339"},
		{now.Add(-time.Minute).UTC().Format(time.RFC3339), "in the past"},
		{now.Add(25 * time.Hour).UTC().Format(time.RFC3339), "at most 24h"},
		{"+25h", "at most 24h"},
	} {
		s := Default()
		s.StartAt = c.v
		err := s.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("--start-at %q: %v", c.v, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !IsUsage(err)):
			t.Errorf("--start-at %q: got %v, want a usage error saying %q", c.v, err, c.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("--start-at %q: error of more than one line: %q", c.v, err)
		}
	}

	// +DURATION is fixed once, by Resolve: every later reading sees the same instant
	s := Default()
	s.StartAt = "+90s"
	r := s.Resolve()
	at, err := time.Parse(time.RFC3339Nano, r.StartAt)
	if err != nil {
		t.Fatalf("resolved --start-at %q: %v", r.StartAt, err)
	}
	if d := time.Until(at); d < 60*time.Second || d > 90*time.Second {
		t.Errorf("+90s resolved to %v from now", d)
	}
	if !r.StartTime().Equal(at) || r.Resolve().StartAt != r.StartAt {
		t.Errorf("resolved %q reads as %v, resolves again to %q", r.StartAt, r.StartTime(), r.Resolve().StartAt)
	}
	if s.StartAt != "+90s" {
		t.Error("Resolve changed its receiver")
	}
	if d := Default(); !d.StartTime().IsZero() {
		t.Error("no --start-at, yet a start time")
	}
}
