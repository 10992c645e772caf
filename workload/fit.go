package workload

import (
	"context"
	"math/rand/v2"
	"strings"
)

// fitter builds texts of an exact length in the server's tokens: prefix + body + suffix,
// where body is the longest run of the given words (then short pad pieces) that keeps the
// whole at n tokens. The whole text is what is measured, never its parts alone: a tokenizer
// may merge characters across the seam between two parts, and only the measured whole says
// what the server will see.
//
// It is the same search as Synthetic's builder, generalised to a fixed prefix and suffix;
// Synthetic keeps its own so that its prompts (and the hashes of saved workloads) stay as
// they were.
type fitter struct {
	tok   Tokenizer
	ratio float64 // tokens per word, learned across calls
}

func newFitter(tok Tokenizer) *fitter { return &fitter{tok: tok, ratio: 1} }

// drawWords draws k words of the vocabulary from rng.
func drawWords(rng *rand.Rand, k int) []string {
	w := make([]string, k)
	for i := range w {
		w[i] = vocabulary[rng.IntN(len(vocabulary))]
	}
	return w
}

// wordsFor is how many words to draw for about n tokens: more than needed, as a tokenizer can
// spend less than one token on a word only rarely, and prefixes of the draw are the candidates.
func wordsFor(n int) int { return max(n, 0) + max(n, 0)/2 + 8 }

// fit returns the text, its measured count, and whether the count is n. When even the
// prefix and suffix alone exceed n, or the words and pad pieces run out, the result is the
// closest text not over n (or prefix+suffix) and exact is false.
func (f *fitter) fit(ctx context.Context, prefix string, words []string, suffix string, n int) (string, int, bool, error) {
	body := strings.Join(words, " ")
	ends := make([]int, len(words)+1) // ends[k]: byte length of the first k words joined
	for i, w := range words {
		ends[i+1] = ends[i] + len(w) + boolInt(i > 0)
	}
	text := func(k int) string { return prefix + body[:ends[k]] + suffix }
	count := func(k int) (int, error) { return f.tok.Count(ctx, text(k)) }

	c0, err := count(0)
	if err != nil || c0 >= n {
		return text(0), c0, c0 == n, err
	}
	k, c, err := f.search(count, len(words), c0, n)
	if err != nil {
		return "", 0, false, err
	}
	if c == n {
		return text(k), c, true, nil
	}
	return f.pad(ctx, prefix+body[:ends[k]], suffix, c, n)
}

// search finds the largest k in [0, hi] with count(k) <= n, given count(0) = c0 < n.
func (f *fitter) search(count func(int) (int, error), hi, c0, n int) (k, c int, err error) {
	lo, loC := 0, c0 // invariant: count(lo) = loC <= n; count(hi+1) > n or hi is the last word
	overshot := false
	for probe := min(max(int(float64(n-c0)/f.ratio), 1), hi); lo < hi; {
		cp, err := count(probe)
		if err != nil {
			return 0, 0, err
		}
		if cp <= n {
			lo, loC, overshot = probe, cp, false
			if cp == n {
				break
			}
		} else {
			hi, overshot = probe-1, true
		}
		if lo >= hi {
			break
		}
		// next probe: interpolate with the ratio learned so far, kept inside (lo, hi]
		if probe > 0 && cp > c0 {
			f.ratio = float64(cp-c0) / float64(probe)
		}
		probe = min(max(lo+int(float64(n-loC)/f.ratio), lo+1), hi)
		if overshot {
			// after an overshoot bisect, so a poor ratio cannot make the search linear
			probe = min(probe, (lo+hi+1)/2)
		}
	}
	return lo, loC, nil
}

// pad appends short pieces to head (before suffix) until the count reaches n, giving up after
// a few tries: the text is then the closest it got without exceeding n, and not exact.
func (f *fitter) pad(ctx context.Context, head, suffix string, c, n int) (string, int, bool, error) {
	for tries := 0; c < n && tries < 4*(n-c)+8; tries++ {
		cand := head + padPieces[tries%len(padPieces)]
		cc, err := f.tok.Count(ctx, cand+suffix)
		if err != nil {
			return "", 0, false, err
		}
		if cc <= n {
			head, c = cand, cc
		}
	}
	return head + suffix, c, c == n, nil
}
