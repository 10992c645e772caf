package runspec

import (
	"fmt"
	"math"

	"servebench/metrics"
)

// ReuseShare parses --reuse; ok is false when it is not set.
func (s *Spec) ReuseShare() (share float64, ok bool, err error) {
	if s.Reuse == "" {
		return 0, false, nil
	}
	share, err = metrics.ParseShare("--reuse", s.Reuse)
	return share, err == nil, err
}

// reusePrefix returns the groups and prefix tokens that make n measured requests of in tokens
// repeat share of their prompt tokens by design. Of d = min(groups, n) groups, the first
// request of each repeats nothing and every other one its group's P prefix tokens, so the
// share is (n−d)·P / (n·in) and P = share·n·in / (n−d), rounded; the suffix keeps at least one
// token of each prompt its own.
func reusePrefix(share float64, groups, n, in int) (g, p int, err error) {
	g = min(max(groups, 1), n)
	if n-g < 1 {
		return 0, 0, fmt.Errorf("--reuse %.0f%% needs more --requests (%d) than prefix groups (%d): each group's first request repeats nothing", 100*share, n, g)
	}
	p = int(math.Round(share * float64(n) * float64(in) / float64(n-g)))
	most := float64(n-g) * float64(in-1) / (float64(n) * float64(in))
	if p < 1 || p >= in {
		return 0, 0, fmt.Errorf("--reuse %.1f%%: with %d requests of --input-tokens %d in %d groups the share by design is at least %.1f%% and at most %.1f%%",
			100*share, n, in, g, 100*float64(n-g)/(float64(n)*float64(in)), 100*most)
	}
	return g, p, nil
}

// reuseCount is the measured requests a run of s sends, which the share is laid out over.
func (s *Spec) reuseCount() int {
	if s.Requests > 0 {
		return s.Requests
	}
	return DefaultRequests
}

// validateReuse checks --reuse: a synthetic workload of fixed lengths and a request count.
func (s *Spec) validateReuse() error {
	share, _, err := s.ReuseShare()
	switch {
	case err != nil:
		return Usage(err)
	case s.Turns > 1 || s.Dataset != "" || s.Prompts != "" || s.Trace != "" || s.InputDist != "" || s.Lengths != "" || s.NumPrompts > 0:
		return Usagef("--reuse builds its own shared prefixes: leave out --turns, --dataset, --prompts, --trace, --num-prompts, --input-dist and --lengths")
	case s.Duration > 0 && s.Requests == 0:
		return Usagef("--reuse lays the share out over --requests: give --requests, not only --duration")
	case share == 0 && s.PrefixGroups > 0:
		return Usagef("--reuse 0 sends no shared prefix: leave out --prefix-groups")
	case share == 0:
		return nil
	}
	_, p, err := reusePrefix(share, s.PrefixGroups, s.reuseCount(), s.InputTokens)
	if err != nil {
		return Usage(err)
	}
	// a --like run carries its baseline's resolved prefix, which Resolve lays out anew; only
	// the user's own clashes
	if s.IsSet("prefix-tokens") && s.PrefixTokens != p {
		return Usagef("--reuse sets --prefix-tokens (%d here): leave --prefix-tokens out", p)
	}
	return nil
}

// resolveReuse makes a --reuse run the shared-prefix workload that gives its share.
func (s *Spec) resolveReuse() {
	share, ok, err := s.ReuseShare()
	if !ok || err != nil || share == 0 {
		return
	}
	if _, p, err := reusePrefix(share, s.PrefixGroups, s.reuseCount(), s.InputTokens); err == nil {
		s.PrefixGroups, s.PrefixTokens = max(s.PrefixGroups, 1), p
	}
}
