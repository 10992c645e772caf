package runspec

import (
	"os"
	"slices"
	"strings"
	"time"

	"servebench/workload"
)

// DatasetFormats are the formats of --dataset.
var DatasetFormats = []string{"sharegpt", "mooncake", "burstgpt", "agent-trace", "answers"}

// DatasetOf splits --dataset FORMAT:PATH ("" and "" when not set).
func (s *Spec) DatasetOf() (format, path string) {
	f, p, _ := strings.Cut(s.Dataset, ":")
	return strings.ToLower(f), p
}

// TraceDataset reports whether --dataset is a trace, whose arrival times make the run an
// open loop.
func (s *Spec) TraceDataset() bool {
	f, _ := s.DatasetOf()
	return f == "mooncake" || f == "burstgpt"
}

// validateDataset checks --dataset and the shared-prefix settings and how they combine with
// the other workload sources.
func (s *Spec) validateDataset() error {
	if s.Dataset != "" {
		f, p := s.DatasetOf()
		switch {
		case !slices.Contains(DatasetFormats, f) || p == "":
			return Usagef("--dataset %q: want FORMAT:PATH with FORMAT %s", s.Dataset, strings.Join(DatasetFormats, ", "))
		case s.Prompts != "" || s.Trace != "":
			return Usagef("--dataset, --prompts and --trace exclude each other: give one source of prompts")
		case s.TraceDataset() && (s.Rate > 0 || s.Ramp != "" || s.Concurrency > 0):
			return Usagef("--dataset %s: is a trace, replayed at its own arrival times: leave out --rate, --ramp and --concurrency (--max-concurrency caps it)", f)
		}
		if _, err := os.Stat(p); err != nil {
			return Usagef("--dataset: %v", err)
		}
	}
	if _, err := s.MaxInputBytes(); err != nil {
		return err
	}
	if err := s.validateSessions(); err != nil {
		return err
	}
	if s.BlockTokens < 0 || (s.IsSet("block-tokens") && s.BlockTokens < 1) || s.BlockTokens > MaxTokens {
		return Usagef("--block-tokens %d: want 1 to %d", s.BlockTokens, MaxTokens)
	}
	switch s.PrefixOrder {
	case "", "interleaved", "grouped", "shuffled":
	default:
		return Usagef("--prefix-order %q: want interleaved, grouped or shuffled", s.PrefixOrder)
	}
	if s.Reuse != "" {
		return s.validateReuse()
	}
	if s.PrefixGroups == 0 && !s.IsSet("prefix-groups") {
		if s.PrefixTokens != 0 {
			return Usagef("--prefix-tokens needs --prefix-groups")
		}
		return nil
	}
	switch {
	case s.PrefixGroups < 1 || s.PrefixGroups > MaxCount:
		return Usagef("--prefix-groups %d: want 1 to %d", s.PrefixGroups, MaxCount)
	case s.PrefixTokens < 1 || s.PrefixTokens >= s.InputTokens:
		return Usagef("--prefix-tokens %d: want at least 1 and fewer than --input-tokens %d (the rest is each request's own suffix)", s.PrefixTokens, s.InputTokens)
	case s.Dataset != "" || s.Prompts != "" || s.Trace != "":
		return Usagef("--prefix-groups builds its own prompts: leave out --dataset, --prompts and --trace")
	}
	return nil
}

// MaxInputBytes is --max-input in bytes (workload.DefaultMaxInputBytes when not set).
func (s *Spec) MaxInputBytes() (int64, error) {
	if s.MaxInput == "" {
		return workload.DefaultMaxInputBytes, nil
	}
	n, err := workload.ParseSize(s.MaxInput)
	if err != nil {
		return 0, Usagef("--max-input %v", err)
	}
	return n, nil
}

// Sessions reports whether the workload is multi-turn sessions.
func (s *Spec) Sessions() bool { return s.Turns > 1 }

// Think parses --think-time: the pause and whether it is the mean of an exponential.
func (s *Spec) Think() (time.Duration, bool, error) {
	if s.ThinkTime == "" {
		return 0, false, nil
	}
	v, exp := strings.CutPrefix(s.ThinkTime, "exp:")
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, false, Usagef("--think-time %q: want a duration such as 2s, or exp:2s for exponential pauses of that mean", s.ThinkTime)
	}
	return d, exp, nil
}

func (s *Spec) validateSessions() error {
	if _, _, err := s.Think(); err != nil {
		return err
	}
	switch f, _ := s.DatasetOf(); {
	case s.Turns < 0 || (s.IsSet("turns") && s.Turns < 1):
		return Usagef("--turns %d: want at least 1", s.Turns)
	case !s.Sessions():
		if s.ThinkTime != "" {
			return Usagef("--think-time needs --turns 2 or more")
		}
	case s.Prompts != "" || s.Trace != "" || s.PrefixGroups > 0 || (s.Dataset != "" && f != "sharegpt" && f != "agent-trace"):
		return Usagef("--turns builds sessions from synthetic turns or --dataset sharegpt: leave out --prompts, --trace and --prefix-groups")
	case s.Shard != "":
		return Usagef("--turns with --shard is not supported: a session's turns must go from one load generator")
	case s.Turns > MaxTurns:
		return Usagef("--turns %d: at most %d turns per session", s.Turns, MaxTurns)
	}
	return s.boundHistory()
}

// Bounds of a multi-turn workload, checked before anything is built. Every turn sends the
// whole history again, so the tokens built grow with the square of --turns: MaxHistoryTokens
// bounds them over the sessions built before the run (every --repeat run's, warmup included).
const (
	MaxTurns         = 1024
	MaxHistoryTokens = 1 << 27
)

// boundHistory refuses a session workload whose prompts would hold more than
// MaxHistoryTokens tokens in all (computed in floating point: the product of large counts
// must not wrap).
func (s *Spec) boundHistory() error {
	sessions := float64(s.Requests + max(s.Warmup, 0))
	if s.Requests == 0 {
		sessions = float64(max(s.NumPrompts, 1000)) / float64(s.Turns) // a duration run's workload
	}
	if s.NumPrompts > 0 {
		sessions = float64(s.NumPrompts)
	}
	t := float64(s.Turns)
	perTurn := float64(max(s.InputTokens, 1) + max(s.OutputTokens, 1))
	total := sessions * float64(max(s.Repeat, 1)) * t * (t + 1) / 2 * perTurn
	if total > MaxHistoryTokens {
		return Usagef("--turns %d: %.3g sessions of %d turns would build %.3g prompt tokens of history (each turn sends the whole history), more than %d: lower --turns, --requests or --repeat",
			s.Turns, sessions, s.Turns, total, MaxHistoryTokens)
	}
	return nil
}
