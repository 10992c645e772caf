package runspec

import (
	"os"
	"slices"
	"strings"
)

// DatasetFormats are the formats of --dataset.
var DatasetFormats = []string{"sharegpt", "mooncake", "burstgpt"}

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
	if s.BlockTokens < 0 || (s.IsSet("block-tokens") && s.BlockTokens < 1) {
		return Usagef("--block-tokens %d: want at least 1", s.BlockTokens)
	}
	switch s.PrefixOrder {
	case "", "interleaved", "grouped", "shuffled":
	default:
		return Usagef("--prefix-order %q: want interleaved, grouped or shuffled", s.PrefixOrder)
	}
	if s.PrefixGroups == 0 && !s.IsSet("prefix-groups") {
		if s.PrefixTokens != 0 {
			return Usagef("--prefix-tokens needs --prefix-groups")
		}
		return nil
	}
	switch {
	case s.PrefixGroups < 1:
		return Usagef("--prefix-groups %d: want at least 1", s.PrefixGroups)
	case s.PrefixTokens < 1 || s.PrefixTokens >= s.InputTokens:
		return Usagef("--prefix-tokens %d: want at least 1 and fewer than --input-tokens %d (the rest is each request's own suffix)", s.PrefixTokens, s.InputTokens)
	case s.Dataset != "" || s.Prompts != "" || s.Trace != "":
		return Usagef("--prefix-groups builds its own prompts: leave out --dataset, --prompts and --trace")
	}
	return nil
}
