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
}

// Validate checks the settings.
func (s *SharedPrefix) Validate() error {
	switch {
	case s.Groups < 1:
		return errors.New("number of prefix groups must be at least 1")
	case s.PerGroup < 1:
		return errors.New("requests per group must be at least 1")
	case s.PrefixTokens < 1 || s.SuffixTokens < 1:
		return errors.New("prefix and suffix lengths must be at least 1 token")
	case s.OutputTokens < 1:
		return errors.New("output length must be at least 1 token")
	case s.Order != "" && s.Order != OrderGrouped && s.Order != OrderInterleaved && s.Order != OrderShuffled:
		return fmt.Errorf("order %q: want %q, %q or %q", s.Order, OrderGrouped, OrderInterleaved, OrderShuffled)
	}
	return nil
}

// ReusableShare is the share of prompt tokens a prefix cache can reuse when it holds every
// prefix: each group's first request computes its prefix and the other N−1 reuse it, so
//
//	share = G·(N−1)·P / (G·N·(P+S))
//
// for G groups, N requests per group, P prefix and S suffix tokens.
func (s *SharedPrefix) ReusableShare() float64 {
	g, n, p, q := float64(s.Groups), float64(s.PerGroup), float64(s.PrefixTokens), float64(s.SuffixTokens)
	return g * (n - 1) * p / (g * n * (p + q))
}

// Generate materialises the workload: request IDs 0, 1, … in the chosen order. Group g's
// prefix depends only on (Seed, g) and request (g, j)'s suffix only on (Seed, g, j), so the
// same settings give the same prompts. With tok == nil lengths are approximate (one token
// per word) and exact is false.
func (s *SharedPrefix) Generate(ctx context.Context, tok Tokenizer) (reqs []Request, exact bool, err error) {
	if err := s.Validate(); err != nil {
		return nil, false, err
	}
	tok, exact = orWords(tok)
	prefixes := make([]string, s.Groups)
	okP := make([]bool, s.Groups)
	errs := make([]error, s.Groups)
	fitters := [4]*fitter{newFitter(tok), newFitter(tok), newFitter(tok), newFitter(tok)}
	parallelW(s.Groups, len(fitters), func(w, g int) {
		words := drawWords(streamRNG(s.Seed, domainPrefix, uint64(g)), wordsFor(s.PrefixTokens))
		prefixes[g], _, okP[g], errs[g] = fitters[w].fit(ctx, "", words, "\n", s.PrefixTokens)
	})
	if err := firstErr(errs); err != nil {
		return nil, false, fmt.Errorf("build a prefix: %w", err)
	}
	total := s.Groups * s.PerGroup
	reqs = make([]Request, total)
	okR := make([]bool, total)
	errs = make([]error, total)
	parallelW(total, len(fitters), func(w, k int) {
		g, j := k/s.PerGroup, k%s.PerGroup
		words := drawWords(streamRNG(s.Seed, domainSuffix, uint64(k)), wordsFor(s.SuffixTokens))
		text, n, ok, err := fitters[w].fit(ctx, prefixes[g], words, "", s.PrefixTokens+s.SuffixTokens)
		r := Request{InputTokens: n, OutputTokens: s.OutputTokens}
		if s.Chat {
			r.Messages = []Message{{Role: "user", Content: text}}
		} else {
			r.Prompt = text
		}
		reqs[s.position(g, j)], okR[k], errs[k] = r, ok && okP[g], err
	})
	if err := firstErr(errs); err != nil {
		return nil, false, fmt.Errorf("build a prompt: %w", err)
	}
	for i := range reqs {
		reqs[i].ID = i
		exact = exact && okR[i]
	}
	if s.Order == OrderShuffled {
		shuffle(reqs, s.Seed)
	}
	return reqs, exact, nil
}

// position is where request j of group g goes (before a shuffle).
func (s *SharedPrefix) position(g, j int) int {
	if s.Order == OrderInterleaved {
		return j*s.Groups + g
	}
	return g*s.PerGroup + j
}

// shuffle permutes reqs with a stream of its own and renumbers them.
func shuffle(reqs []Request, seed int64) {
	rng := streamRNG(seed, domainOrder, 0)
	rng.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	for i := range reqs {
		reqs[i].ID = i
	}
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
