package metrics

import (
	"math"
	"slices"
)

// maxListedTokens is the largest per-event token count whose gaps get a list of their own
// in itlSample. Speculative decoding and batched streams carry a few tokens per event; an
// event with more (a whole answer in one chunk) is rare and goes to the wide list.
const maxListedTokens = 64

// itlSample holds the gaps between consecutive content events of completed requests, from
// which both pooled ITL distributions are computed exactly: ITL (chunk) is every gap, ITL
// (token) is every gap g of an event with k known tokens as k values g/k. Each gap is kept
// once, as a uint32 of nanoseconds (4 bytes per event) in the list of its event's token
// count, so one store serves both distributions and a k-token event costs no more than a
// 1-token one.
//
// We tried one float64 per value for each distribution (8 bytes per gap plus 8 per token,
// about 4 GB for 128M events) and then a list of (g/k, k) pairs for ITL (token) beside the
// ITL (chunk) gaps (8+ bytes per event); sharing the gaps is exact and half the size.
//
// Within a list every value is g/k for the same k, so sorting a list by g sorts it by value
// for both distributions, and Summary merges the sorted lists in value order (mergedStat)
// instead of copying them into one float64 slice.
type itlSample struct {
	// byTokens[k] for k ≥ 1: gaps of events that carried k tokens, in requests whose every
	// event has a known count; byTokens[0]: gaps of requests with an unknown count, which
	// enter ITL (chunk) only.
	byTokens [][]uint32
	// wide holds the gaps that do not fit a list: outside [0, 2^32) ns (over 4.29 s, or
	// negative in a malformed record), or of events with more than maxListedTokens tokens.
	wide []wideGap
}

// wideGap is one gap that does not fit a uint32 list, with its event's token count (0 when
// the request's counts are unknown).
type wideGap struct {
	gap int64
	n   int32
}

// add stores the gap before an event that carried n tokens (n = 0: counts unknown).
func (s *itlSample) add(gap int64, n int32) {
	if gap < 0 || gap > math.MaxUint32 || n < 0 || n > maxListedTokens {
		s.wide = append(s.wide, wideGap{gap, n})
		return
	}
	if int(n) >= len(s.byTokens) {
		s.byTokens = append(s.byTokens, make([][]uint32, int(n)+1-len(s.byTokens))...)
	}
	s.byTokens[n] = append(s.byTokens[n], uint32(gap))
}

// sort sorts every list by gap, which is value order in both distributions.
func (s *itlSample) sort() {
	for _, l := range s.byTokens {
		slices.Sort(l)
	}
}

// chunk returns the sorted runs of ITL (chunk): every gap once, as float64(gap).
func (s *itlSample) chunk() []cursor {
	var cs []cursor
	for _, l := range s.byTokens {
		cs = append(cs, cursor{u: l, div: 1, w: 1})
	}
	wide := make([]weighted, len(s.wide))
	for i, g := range s.wide {
		wide[i] = weighted{float64(g.gap), 1}
	}
	return append(cs, wideCursor(wide))
}

// token returns the sorted runs of ITL (token): the gap of a k-token event as k values
// float64(gap)/float64(k), the very expression of the float64 implementation, so that every
// value (and the order of equal ones) is the same.
func (s *itlSample) token() []cursor {
	var cs []cursor
	for k, l := range s.byTokens {
		if k > 0 {
			cs = append(cs, cursor{u: l, div: float64(k), w: uint32(k)})
		}
	}
	var wide []weighted
	for _, g := range s.wide {
		if g.n > 0 {
			wide = append(wide, weighted{float64(g.gap) / float64(g.n), uint32(g.n)})
		}
	}
	return append(cs, wideCursor(wide))
}

// stats sorts the sample and describes both distributions.
func (s *itlSample) stats(ps []float64) (chunk, token Stat) {
	s.sort()
	return mergedStat(s.chunk(), ps), mergedStat(s.token(), ps)
}
