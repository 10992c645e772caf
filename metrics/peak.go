package metrics

import (
	"maps"
	"math"
	"slices"
)

// blockMS is how many 1 ms bins one block of a tokenHist holds (4 KiB of counts).
const blockMS = 1024

// tokenHist counts the output tokens of content events per millisecond since t0, for peak
// output tokens/s. Its memory grows with the span of the run, not with the number of events:
// 4 bytes per millisecond that holds an event's block (1 h ≈ 14 MB).
//
// We kept every event's time and count before (12 bytes per event) because the 1 s buckets
// are aligned to the window start, which is known only when every record is in. An exact
// scheme needs each event's sub-millisecond time, which costs as much; so events are placed
// to the millisecond instead (see peak).
//
// Blocks live in a map so that a sparse run, or a malformed record with a time far from the
// rest (negative, or near 2^63 ns), costs one block, never an allocation the size of the gap.
type tokenHist struct {
	blocks  map[int64]*[blockMS]uint32 // by ⌊ms / blockMS⌋
	big     map[int64]int64            // tokens of a ms bin beyond what its uint32 held
	last    *[blockMS]uint32           // the block of the previous event, to skip the map lookup
	lastKey int64
	events  int // events added
	unknown int // events counted as one token because their count was unknown
}

// add counts an event at time t (ns since t0) that carried n tokens; an unknown count
// (n ≤ 0) counts as one token (vLLM's rule).
func (h *tokenHist) add(t int64, n int32) {
	h.events++
	if n <= 0 {
		n = 1
		h.unknown++
	}
	ms := floorDiv(t, 1e6)
	key := floorDiv(ms, blockMS)
	if h.last == nil || key != h.lastKey {
		if h.blocks == nil {
			h.blocks = make(map[int64]*[blockMS]uint32)
		}
		if h.blocks[key] == nil {
			h.blocks[key] = new([blockMS]uint32)
		}
		h.last, h.lastKey = h.blocks[key], key
	}
	bin := &h.last[ms-key*blockMS]
	if v := uint64(*bin) + uint64(n); v <= math.MaxUint32 {
		*bin = uint32(v)
		return
	}
	// More than 2^32 tokens in one millisecond: only a malformed count gets here, but the
	// total stays exact rather than wrapping.
	if h.big == nil {
		h.big = make(map[int64]int64)
	}
	h.big[ms] += int64(n)
}

// peak returns the most tokens in any 1 s bucket of the window [start, end]: "Peak output
// tokens/s = the largest count of tokens (not events) whose events fall in any 1 s bucket".
// Buckets are aligned to the window start, with events placed to the millisecond: an event
// in millisecond m = ⌊t / 1 ms⌋ is in bucket ⌊(m − m0) / 1000⌋, m0 = ⌊start / 1 ms⌋, and
// counts when m0 ≤ m ≤ ⌊end / 1 ms⌋. This is the exact bucket ⌊(t − start) / 1 s⌋ except
// for an event in a bucket's first millisecond but earlier within it than the start is
// within its millisecond: such an event moves to the next bucket (or, before the start,
// now counts in the first). An event after end but in end's millisecond counts too; only a
// malformed record has one, as events come before done. When the window is not whole seconds,
// its last whole second [end − 1 s, end] is a bucket too, in place of the partial last one.
// A window under 1 s has only its partial bucket. ok is false without events or with an
// empty window.
func (h *tokenHist) peak(start, end int64) (peak int64, ok bool) {
	if h.events == 0 || end <= start {
		return 0, false
	}
	m0, m1 := floorDiv(start, 1e6), floorDiv(end, 1e6)
	keys := slices.Sorted(maps.Keys(h.blocks))
	var cur int64
	bucket := int64(-1)
	for _, key := range keys {
		first := key * blockMS
		if first+blockMS <= m0 || first > m1 {
			continue
		}
		for i, c := range h.blocks[key] {
			ms := first + int64(i)
			if c == 0 || ms < m0 || ms > m1 {
				continue
			}
			if b := (ms - m0) / 1000; b != bucket {
				peak, cur, bucket = max(peak, cur), 0, b
			}
			cur += int64(c) + h.big[ms]
		}
	}
	peak = max(peak, cur)
	// The last aligned bucket is a fraction of a second whenever the window is not whole
	// seconds, and its count is that fraction's: on a 2.3 s run at a flat rate it held a third
	// of the others, and a run whose tokens crowd into its end had a peak below its mean. The
	// last whole second, [end − 1 s, end], stands in for it.
	if span := m1 - m0 + 1; span > 1000 && span%1000 != 0 {
		peak = max(peak, h.count(m1-999, m1))
	}
	return peak, true
}

// count is the tokens of the milliseconds [from, to].
func (h *tokenHist) count(from, to int64) int64 {
	var n int64
	for key := floorDiv(from, blockMS); key <= floorDiv(to, blockMS); key++ {
		b := h.blocks[key]
		if b == nil {
			continue
		}
		for i, c := range b {
			if ms := key*blockMS + int64(i); c != 0 && ms >= from && ms <= to {
				n += int64(c) + h.big[ms]
			}
		}
	}
	return n
}

// floorDiv is ⌊a / b⌋ for b > 0 (Go's / truncates towards zero, which would put negative
// times in the wrong bin).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
