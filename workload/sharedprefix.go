package workload

import (
	"context"
	"errors"
	"fmt"
)

// Order is the order in which a shared-prefix workload sends its groups' requests.
type Order string

// Orders of a shared-prefix workload.
const (
	// OrderGrouped sends every request of group 0, then of group 1, …: each prefix is hot
	// while its group runs, the kindest case for a small cache.
	OrderGrouped Order = "grouped"
	// OrderInterleaved sends request 0 of every group, then request 1 of every group, …: all
	// prefixes are live at once, so a cache must hold G prefixes to reuse them.
	OrderInterleaved Order = "interleaved"
	// OrderShuffled sends the requests in a seeded random order, as SGLang's benchmark does.
	OrderShuffled Order = "shuffled"
)

// SharedPrefix is SGLang's generated-shared-prefix workload: Groups groups, each with a
// common prefix of PrefixTokens tokens (a system prompt, a long document) and PerGroup
// requests that append unique suffixes of SuffixTokens tokens, each asking for OutputTokens.
// Lengths are exact in the server's tokens when a tokenizer is given: the prefix is exactly
// PrefixTokens tokens (ending with a newline, so that it does not merge with the suffix) and
// each whole prompt exactly PrefixTokens+SuffixTokens, measured whole.
type SharedPrefix struct {
	Groups       int   `json:"groups"`
	PerGroup     int   `json:"per_group"`
	PrefixTokens int   `json:"prefix_tokens"`
	SuffixTokens int   `json:"suffix_tokens"`
	OutputTokens int   `json:"output_tokens"`
	Seed         int64 `json:"seed"`
	Order        Order `json:"order,omitempty"` // "" means OrderGrouped
	Chat         bool  `json:"chat,omitempty"`
	// Count is how many requests to build, the first Count of the Groups×PerGroup in Order
	// (0 builds them all): the requests that will be sent, and only the prefixes they use,
	// so that --prefix-groups 1000000 --requests 3 builds three prompts, not a million.
	Count int `json:"count,omitempty"`
	// Nonce, when not 0, is mixed into the prefixes' and suffixes' words (not the order):
	// another invocation's prompts (Synthetic.Nonce). The groups stay shared within this one.
	Nonce uint64 `json:"nonce,omitempty"`
}

// maxSharedPrefixRequests bounds Groups×PerGroup: the shuffled order draws a permutation of
// them all.
const maxSharedPrefixRequests = 1 << 30

// Validate checks the settings.
func (s *SharedPrefix) Validate() error {
	switch {
	case s.Groups < 1:
		return errors.New("number of prefix groups must be at least 1")
	case s.PerGroup < 1:
		return errors.New("requests per group must be at least 1")
	case s.Groups > maxSharedPrefixRequests/s.PerGroup:
		return fmt.Errorf("%d groups of %d requests: over the %d-request limit", s.Groups, s.PerGroup, maxSharedPrefixRequests)
	case s.Count < 0:
		return errors.New("number of requests must not be negative")
	case s.PrefixTokens < 1 || s.SuffixTokens < 1:
		return errors.New("prefix and suffix lengths must be at least 1 token")
	case s.PrefixTokens > maxTraceTokens-s.SuffixTokens:
		return fmt.Errorf("prefix and suffix of %d tokens: over the %d-token limit", s.PrefixTokens+s.SuffixTokens, maxTraceTokens)
	case s.OutputTokens < 1:
		return errors.New("output length must be at least 1 token")
	case s.Order != "" && s.Order != OrderGrouped && s.Order != OrderInterleaved && s.Order != OrderShuffled:
		return fmt.Errorf("order %q: want %q, %q or %q", s.Order, OrderGrouped, OrderInterleaved, OrderShuffled)
	}
	return nil
}

// size is how many requests Generate builds.
func (s *SharedPrefix) size() int {
	if total := s.Groups * s.PerGroup; s.Count == 0 || s.Count > total {
		return total
	}
	return s.Count
}

// layout returns, for each request built, its key k = g·PerGroup + j (request j of group g):
// the order's first size() requests, computed without building the others.
func (s *SharedPrefix) layout() []int {
	n := s.size()
	keys := make([]int, n)
	switch s.Order {
	case OrderInterleaved:
		for i := range keys {
			keys[i] = (i%s.Groups)*s.PerGroup + i/s.Groups // position j·G + g
		}
	case OrderShuffled:
		// the seeded shuffle of all G·N requests in grouped order (as it always was, so a
		// workload's prompts and hash stay the same), of which the first n are kept
		perm := make([]int32, s.Groups*s.PerGroup)
		for i := range perm {
			perm[i] = int32(i)
		}
		rng := streamRNG(s.Seed, domainOrder, 0)
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		for i := range keys {
			keys[i] = int(perm[i])
		}
	default:
		for i := range keys {
			keys[i] = i
		}
	}
	return keys
}

// Generate materialises the workload: request IDs 0, 1, … in the chosen order, the first
// Count of them. Group g's prefix depends only on (Seed, g) and request (g, j)'s suffix only
// on (Seed, g, j), so the same settings give the same prompts. With tok == nil lengths are
// approximate (one token per word) and exact is false.
func (s *SharedPrefix) Generate(ctx context.Context, tok Tokenizer) (reqs []Request, exact bool, err error) {
	if err := s.Validate(); err != nil {
		return nil, false, err
	}
	tok, exact = orWords(tok)
	keys := s.layout()
	fitters := [4]*fitter{newFitter(tok), newFitter(tok), newFitter(tok), newFitter(tok)}
	prefixes, okP, err := s.prefixes(ctx, keys, fitters)
	if err != nil {
		return nil, false, err
	}
	reqs = make([]Request, len(keys))
	okR := make([]bool, len(keys))
	errs := make([]error, len(keys))
	parallelW(len(keys), len(fitters), func(w, i int) {
		if errs[i] = ctx.Err(); errs[i] != nil {
			return
		}
		k := keys[i]
		g := k / s.PerGroup
		words := drawWords(streamRNG(textSeed(s.Seed, s.Nonce), domainSuffix, uint64(k)), wordsFor(s.SuffixTokens))
		text, n, ok, err := fitters[w].fit(ctx, prefixes[g], words, "", s.PrefixTokens+s.SuffixTokens)
		r := Request{ID: i, InputTokens: n, OutputTokens: s.OutputTokens}
		if s.Chat {
			r.Messages = []Message{{Role: "user", Content: text}}
		} else {
			r.Prompt = text
		}
		reqs[i], okR[i], errs[i] = r, ok && okP[g], err
	})
	if err := firstErr(errs); err != nil {
		return nil, false, fmt.Errorf("build a prompt: %w", err)
	}
	for i := range reqs {
		exact = exact && okR[i]
	}
	return reqs, exact, nil
}

// prefixes builds the prefix of every group the keys use, and only those.
func (s *SharedPrefix) prefixes(ctx context.Context, keys []int, fitters [4]*fitter) (map[int]string, map[int]bool, error) {
	var groups []int
	seen := map[int]bool{}
	for _, k := range keys {
		if g := k / s.PerGroup; !seen[g] {
			seen[g] = true
			groups = append(groups, g)
		}
	}
	texts := make([]string, len(groups))
	ok := make([]bool, len(groups))
	errs := make([]error, len(groups))
	parallelW(len(groups), len(fitters), func(w, i int) {
		if errs[i] = ctx.Err(); errs[i] != nil {
			return
		}
		words := drawWords(streamRNG(textSeed(s.Seed, s.Nonce), domainPrefix, uint64(groups[i])), wordsFor(s.PrefixTokens))
		texts[i], _, ok[i], errs[i] = fitters[w].fit(ctx, "", words, "\n", s.PrefixTokens)
	})
	if err := firstErr(errs); err != nil {
		return nil, nil, fmt.Errorf("build a prefix: %w", err)
	}
	prefixes, okP := make(map[int]string, len(groups)), make(map[int]bool, len(groups))
	for i, g := range groups {
		prefixes[g], okP[g] = texts[i], ok[i]
	}
	return prefixes, okP, nil
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
