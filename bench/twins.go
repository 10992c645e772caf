package bench

import (
	"context"
	"fmt"
	"math"
	"slices"

	"servebench/workload"
)

// Shape twins: a warmup that reaches the shapes the measured requests will meet. Engines that
// compile a kernel the first time a batch size or a prefill length appears (llama.cpp's
// Vulkan pipelines, torch.compile, padded prefill buckets) stay cold after a warmup of one
// request per user: its requests all start at once, so the server prefills them together and
// never meets a lone short or long prompt, which the measured requests then compile (against
// `servebench sim --lazy-compile 500ms`, 8 users, 16 warmup requests drawn like the measured
// ones: 2 of the 10 runs compiled during the measurement, and 3 of the 200 measured
// requests' shortest prompts were its cause, see docs/metrics.md "Warmup").
//
// So the default warmup is two waves of one request per user (runspec.DefaultWarmup): the
// first drawn like the measured requests, sent at once as the measured phase will start (the
// load package holds the first measured request until the warmup has drained); the second,
// sent one by one as users free up, of twins spanning the measured prompt lengths from the
// shortest to the longest in equal ratios, with text of their own (a twin's text repeats no
// measured prompt, so no measured request is served from a cache the warmup filled).

// twinLengths is the prompt lengths of the warmup's n twins: from the shortest measured
// prompt to the longest in equal ratios (geometric steps), so that every length bucket up to
// a ratio of (longest/shortest)^(1/(n−1)) wide between them is met, whatever its bounds
// (powers of two, an engine's tile sizes); one twin has the shortest. Each twin takes the
// output length of the measured request whose prompt length is nearest its own.
func twinLengths(measured []workload.Request, n int) (in, out []int) {
	if n < 1 || len(measured) == 0 {
		return nil, nil
	}
	byLen := slices.Clone(measured)
	slices.SortStableFunc(byLen, func(a, b workload.Request) int { return a.InputTokens - b.InputTokens })
	lo, hi := float64(byLen[0].InputTokens), float64(byLen[len(byLen)-1].InputTokens)
	for k := range n {
		l := lo
		if n > 1 {
			l = lo * math.Pow(hi/lo, float64(k)/float64(n-1))
		}
		want := int(math.Round(l))
		j, _ := slices.BinarySearchFunc(byLen, want, func(r workload.Request, v int) int { return r.InputTokens - v })
		if j == len(byLen) || (j > 0 && want-byLen[j-1].InputTokens < byLen[j].InputTokens-want) {
			j--
		}
		in, out = append(in, want), append(out, byLen[j].OutputTokens)
	}
	return in, out
}

// addTwins replaces the second half of the warmup's prompts, reqs[warm/2 : warm], by twins
// spanning the prompt lengths of the measured requests reqs[warm:] (twinLengths), built by
// syn's generator with a seed of their own.
func addTwins(ctx context.Context, syn workload.Synthetic, tok workload.Tokenizer, reqs []workload.Request, warm int, seed int64) error {
	first := warm / 2
	if first < 1 || warm >= len(reqs) {
		return nil
	}
	for _, m := range reqs[warm:] {
		if m.InputTokens <= 0 {
			return nil // lengths unknown: no extremes to reach
		}
	}
	in, out := twinLengths(reqs[warm:], warm-first)
	for j := range in {
		t := syn
		t.Count, t.First, t.Seed, t.Lengths, t.RangeRatio = 1, j, seed, nil, 0
		t.InputTokens, t.OutputTokens = max(in[j], 1), max(out[j], 1)
		got, _, err := t.Generate(ctx, tok)
		if err != nil {
			return fmt.Errorf("build the warmup's prompt of %d tokens: %w", in[j], err)
		}
		got[0].ID = reqs[first+j].ID
		reqs[first+j] = got[0]
	}
	return nil
}
