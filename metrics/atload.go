package metrics

import "slices"

// At-load share: how much of a run's window the run's load actually ran in. A window that is
// mostly ramp-in (measured requests waiting behind other work, or for the first tokens) and
// drain (the last requests running on as nothing more is sent) reports a throughput that is
// not the server's at that load: a sweep point whose measured requests queued behind the
// warmup at a 4-slot llama.cpp server streamed no measured token in the first 46% of its
// window, and reported half the rate the server completed requests at.
//
//	at-load share = (output tokens in the window / window) / (mean output tokens of the bins at load)
//
// over atLoadBins equal bins of the window, a bin being at load when it holds at least half
// the tokens of the window's 75th-percentile bin (so that a window at load from start to end
// has a share near 1 whatever its noise, and one with a dead first half near 0.5). It is
// computed from the measured requests' content events, placed to the millisecond (tokenHist).
const (
	atLoadBins = 20
	atLoadRef  = (atLoadBins - 1) * 3 / 4 // index of the 75th-percentile bin among the sorted bins
)

// atLoad is the at-load share of the window [start, end]; false without events or window.
func (h *tokenHist) atLoad(start, end int64) (float64, bool) {
	if h.events == 0 || end <= start {
		return 0, false
	}
	bins := make([]float64, atLoadBins)
	w := float64(end - start)
	for key, blk := range h.blocks {
		for i, c := range blk {
			if c == 0 {
				continue
			}
			ms := key*blockMS + int64(i)
			b := int((float64(ms)*1e6 + 5e5 - float64(start)) / w * atLoadBins) // the millisecond's centre
			if b < 0 || b >= atLoadBins {
				continue
			}
			bins[b] += float64(c) + float64(h.big[ms])
		}
	}
	sorted := slices.Sorted(slices.Values(bins))
	ref := sorted[atLoadRef]
	if ref <= 0 {
		return 0, false
	}
	var total, at float64
	n := 0
	for _, v := range bins {
		total += v
		if v >= ref/2 {
			at += v
			n++
		}
	}
	return (total / atLoadBins) / (at / float64(n)), true
}
