package runspec

import (
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Start at a given instant: --start-at lets the shards of a split run (the pods of a
// Kubernetes Indexed Job, started seconds apart by the scheduler) begin their schedules at the
// same wall-clock instant. Each process prepares first (waits for the server, builds its
// workload, records its conditions), then waits until the instant, then starts its clock and
// its schedule, warmup first: every shard has the same warmup, so their measured phases start
// together too. The merge measures how well that worked: the spread of the shards' first
// measured sends (metrics.Summary.ShardStartSkew).

// MaxStartAhead is the furthest --start-at may lie ahead: further is more likely a mistyped
// date than a plan, and would hold a pod for a day.
const MaxStartAhead = 24 * time.Hour

// bindStartFlags registers --start-at.
func bindStartFlags(fs *pflag.FlagSet, s *Spec) {
	fs.StringVar(&s.StartAt, "start-at", s.StartAt, "begin the schedule (warmup first) at this wall-clock `TIME`, RFC 3339 (2026-12-05T01:00:00Z) or +DURATION from now (+30s), after the server is ready and the workload built: the shards of a split run then start together; at most 24h ahead")
}

// StartTime is the instant --start-at names (zero when it is not set). A +DURATION is from
// now, until Resolve fixes it. Call it after Validate.
func (s *Spec) StartTime() time.Time {
	t, _ := parseStartAt(s.StartAt, time.Now())
	return t
}

// validateStartAt refuses a --start-at that is not a time, is past, or is more than
// MaxStartAhead ahead.
func (s *Spec) validateStartAt() error {
	if s.StartAt == "" {
		return nil
	}
	now := time.Now()
	t, err := parseStartAt(s.StartAt, now)
	switch {
	case err != nil:
		return Usagef("--start-at %q: want an RFC 3339 time (2026-12-05T01:00:00Z) or +DURATION from now (+30s)", s.StartAt)
	case !t.After(now):
		return Usagef("--start-at %s is %v in the past: give each shard a time still ahead when it starts", s.StartAt, now.Sub(t).Round(time.Millisecond))
	case t.Sub(now) > MaxStartAhead:
		return Usagef("--start-at %s is %v ahead: at most %v", s.StartAt, t.Sub(now).Round(time.Second), MaxStartAhead)
	}
	return nil
}

// resolveStartAt fixes a +DURATION to the instant it names now, so that every later reading
// (and the records header) sees the same instant.
func (s *Spec) resolveStartAt() {
	if strings.HasPrefix(s.StartAt, "+") {
		if t, err := parseStartAt(s.StartAt, time.Now()); err == nil {
			s.StartAt = t.UTC().Format(time.RFC3339Nano)
		}
	}
}

// parseStartAt reads v as an RFC 3339 time, or as +DURATION from now (a positive duration).
func parseStartAt(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, ok := strings.CutPrefix(v, "+"); ok {
		dur, err := time.ParseDuration(d)
		if err != nil || dur <= 0 {
			return time.Time{}, Usagef("not a positive duration")
		}
		return now.Add(dur).Round(0), nil
	}
	return time.Parse(time.RFC3339Nano, v)
}
