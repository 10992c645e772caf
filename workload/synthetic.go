package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
)

// Tokenizer counts the tokens of a text with the target server's own tokenizer.
type Tokenizer interface {
	Count(ctx context.Context, text string) (int, error)
}

// TokenizerFunc adapts a function to Tokenizer.
type TokenizerFunc func(ctx context.Context, text string) (int, error)

// Count calls f.
func (f TokenizerFunc) Count(ctx context.Context, text string) (int, error) { return f(ctx, text) }

// Synthetic describes a seeded synthetic workload: random prompts of an exact input length in
// tokens and a fixed output length. Lengths are uniform in [L(1−r), L(1+r)] (vLLM's
// --random-range-ratio meaning).
type Synthetic struct {
	Count        int
	InputTokens  int
	OutputTokens int
	RangeRatio   float64
	Seed         int64
	Chat         bool // build chat messages instead of a completions prompt
	// First is the index of the first request built: requests First … First+Count−1 of the
	// seed's stream, so a later run's prompts continue the stream instead of repeating it.
	First int
	// Lengths, when set, draws each request's lengths (lengths.go) instead of the fixed
	// lengths ± RangeRatio.
	Lengths *Lengths
	// Recipes keeps each request's recipe beside its text (recipe.go), so that the records
	// header can carry the recipes instead of the text.
	Recipes bool
	// Lazy keeps each request as its recipe only (implies Recipes): its text is rebuilt,
	// exactly, when it is sent, hashed or saved, so a workload of long prompts is not held
	// in memory.
	Lazy bool
	// Nonce, when not 0, draws each prompt's words from (Seed, Nonce, i) instead of (Seed, i),
	// after its lengths, which stay (Seed, i)'s: prompts of the same lengths whose text no
	// earlier invocation sent (a per-invocation nonce keeps a server's prefix cache from
	// serving what another invocation left in it). 0 is the text of the seed alone.
	Nonce uint64
}

// Validate checks the settings.
func (s *Synthetic) Validate() error {
	switch {
	case s.Count < 1:
		return errors.New("number of prompts must be at least 1")
	case s.First < 0:
		return errors.New("first prompt index must not be negative")
	case s.InputTokens < 1:
		return errors.New("--input-tokens must be at least 1")
	case s.OutputTokens < 1:
		return errors.New("--output-tokens must be at least 1")
	case s.RangeRatio < 0 || s.RangeRatio >= 1:
		return errors.New("--range-ratio must be in [0, 1)")
	}
	return nil
}

// Generate materialises the workload. With a tokenizer every prompt is built to its exact
// length in the server's tokens (exact=true); with tok == nil lengths are approximate (one
// token per word is assumed) and exact=false. Request i depends only on (Seed, i), so the same
// settings always give the same prompts, and prompts differ from each other (no accidental
// prefix-cache hits between requests).
func (s *Synthetic) Generate(ctx context.Context, tok Tokenizer) (reqs []Request, exact bool, err error) {
	if err := s.Validate(); err != nil {
		return nil, false, err
	}
	reqs = make([]Request, s.Count)
	exactN := make([]bool, s.Count)
	errs := make([]error, s.Count)
	// a few workers in parallel: each prompt costs tokenizer round trips, which wait on the
	// server, not on our CPU; each worker learns its own tokens-per-word ratio
	var wg sync.WaitGroup
	workers := min(4, s.Count)
	for w := range workers {
		wg.Go(func() {
			b := &builder{tok: tok, ratio: 1}
			for i := w; i < s.Count; i += workers {
				reqs[i], exactN[i], errs[i] = s.one(ctx, b, s.First+i)
				if errs[i] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	exact = tok != nil
	for i := range reqs {
		if errs[i] != nil {
			return nil, false, fmt.Errorf("prompt %d: %w", s.First+i, errs[i])
		}
		exact = exact && exactN[i]
	}
	return reqs, exact, nil
}

// one builds request i; it depends only on (Seed, i).
func (s *Synthetic) one(ctx context.Context, b *builder, i int) (Request, bool, error) {
	rng := rand.New(rand.NewPCG(uint64(s.Seed), uint64(i)))
	in, out := s.lengths(rng)
	if s.Nonce != 0 {
		rng = rand.New(textSource(s.Seed, s.Nonce, i))
	}
	bt, err := b.build(ctx, rng, in)
	if err != nil {
		return Request{}, false, err
	}
	text, n, ok := bt.text, bt.tokens, bt.exact
	r := Request{ID: i, InputTokens: n, OutputTokens: out}
	// a recipe replays the rng as a fixed length ± RangeRatio draws it: drawn length
	// distributions (Lengths) keep their text
	if (s.Recipes || s.Lazy) && s.Lengths == nil {
		if r.recipe = s.recipeOf(i, bt); r.recipe != nil && s.Lazy {
			return r, ok, nil
		}
	}
	if s.Chat {
		r.Messages = []Message{{Role: "user", Content: text}}
	} else {
		r.Prompt = text
	}
	return r, ok, nil
}

// textSource is the source of a nonced prompt's words: its own stream for each (seed, nonce,
// index), unrelated to the length draws and to any other nonce's.
func textSource(seed int64, nonce uint64, i int) *rand.PCG {
	return rand.NewPCG(uint64(seed)^mix64(nonce), mix64(uint64(i)^nonce))
}

// lengths draws request lengths from rng: from Lengths when set, else each uniform around
// its fixed length (the rng consumed exactly as before Lengths existed, so an older
// workload's prompts and hash are unchanged).
func (s *Synthetic) lengths(rng *rand.Rand) (int, int) {
	if s.Lengths != nil {
		return s.Lengths.draw(rng, s.InputTokens, s.OutputTokens, s.RangeRatio)
	}
	return drawLength(rng, s.InputTokens, s.RangeRatio), drawLength(rng, s.OutputTokens, s.RangeRatio)
}

// drawLength draws uniformly in [L(1−r), L(1+r)], at least 1.
func drawLength(rng *rand.Rand, l int, r float64) int {
	if r == 0 {
		return l
	}
	lo := int(float64(l) * (1 - r))
	hi := int(float64(l) * (1 + r))
	n := lo + rng.IntN(hi-lo+1)
	return max(n, 1)
}

// builder makes prompts of an exact token count against a tokenizer, learning the
// tokens-per-word ratio as it goes so that most prompts need few tokenize calls.
type builder struct {
	tok   Tokenizer
	ratio float64 // tokens per word, learned
}

// built is a prompt as built: its text, the number of drawn words it keeps and the filler
// appended after them (together its recipe), its token count as measured (the length asked
// for when no tokenizer), and whether the count is exact.
type built struct {
	text   string
	words  int
	pad    string
	tokens int
	exact  bool
}

// build returns a prompt of n tokens (or its best approximation).
func (b *builder) build(ctx context.Context, rng *rand.Rand, n int) (built, error) {
	// draw more words than needed; prefixes of this sequence are the candidates
	words := make([]string, wordsDrawn(n))
	for i := range words {
		words[i] = vocabulary[rng.IntN(len(vocabulary))]
	}
	if b.tok == nil {
		return built{text: strings.Join(words[:n], " "), words: n, tokens: n}, nil
	}
	k, c, err := b.searchWords(ctx, words, n)
	if err != nil {
		return built{}, err
	}
	text := strings.Join(words[:k], " ")
	if c == n {
		return built{text: text, words: k, tokens: c, exact: true}, nil
	}
	padded, c, ok, err := b.pad(ctx, text, c, n)
	if err != nil {
		return built{}, err
	}
	return built{text: padded, words: k, pad: padded[len(text):], tokens: c, exact: ok}, nil
}

// wordsDrawn is how many words a prompt of n tokens draws: more than it needs, so that the
// search has room above a tokenizer that merges words.
func wordsDrawn(n int) int { return n + n/2 + 8 }

// searchWords finds the largest word-prefix length k whose token count c is <= n.
func (b *builder) searchWords(ctx context.Context, words []string, n int) (k, c int, err error) {
	count := func(k int) (int, error) { return b.tok.Count(ctx, strings.Join(words[:k], " ")) }
	guess := min(max(int(float64(n)/b.ratio), 1), len(words))
	lo, hi := 0, len(words) // invariant: count(lo) <= n (count(0) = 0); count(hi) > n or hi = len
	loC := 0
	overshot := false
	for probe := guess; lo < hi; {
		cp, err := count(probe)
		if err != nil {
			return 0, 0, err
		}
		if cp <= n {
			lo, loC = probe, cp
			if cp == n {
				break
			}
			overshot = false
		} else {
			hi = probe - 1
			overshot = true
		}
		if lo >= hi {
			break
		}
		// next probe: interpolate with the ratio learned so far, kept inside (lo, hi]
		if probe > 0 && cp > 0 {
			b.ratio = float64(cp) / float64(probe)
		}
		probe = min(max(lo+int(float64(n-loC)/b.ratio), lo+1), hi)
		if overshot {
			// after an overshoot bisect, so a poor ratio cannot make the search linear
			probe = min(probe, (lo+hi+1)/2)
		}
	}
	return lo, loC, nil
}

// pad appends short filler pieces until the count reaches n exactly, giving up after a few
// tries (the prompt is then as close as it got without exceeding n, and not exact).
func (b *builder) pad(ctx context.Context, text string, c, n int) (string, int, bool, error) {
	for tries := 0; c < n && tries < 4*(n-c)+8; tries++ {
		cand := text + padPieces[tries%len(padPieces)]
		cc, err := b.tok.Count(ctx, cand)
		if err != nil {
			return "", 0, false, err
		}
		if cc <= n {
			text, c = cand, cc
		}
	}
	return text, c, c == n, nil
}

// padPieces are short strings that most tokenizers encode as one token.
var padPieces = []string{" a", ".", " I", ",", "!", " x", "?", ";"}
