package metrics

import (
	"fmt"

	"servebench/record"
)

// Warmup overlap: how much of a run's window the server spent still serving the warmup. A
// point's throughput and latencies describe its load only when the window held that load and
// nothing else; a sweep's 40-user point whose measured requests queued behind 40 warmup
// requests at a 4-slot llama.cpp server shared the first 46% of its window with them and
// reported half the rate the server completed requests at.
//
//	warmup overlap = max(0, last end of a warmup request − window start) / window
//
// A closed loop's first measured request waits for the warmup to drain (package load), so its
// overlap is 0; an open loop's arrivals keep their schedule, and its overlap is about one
// E2E of the warmup's last requests over the window, more when the warmup queued.
//
// We tried the share of the window in which measured tokens flowed at the point's rate first:
// a server prefilling long prompts streams no token while it works, and a 4-user point with
// TTFT a third of its E2E read as "mostly idle".
type warmupEnd struct {
	last int64 // ns since t0: the latest end of a warmup request (0: none)
}

// add notes a warmup request's end (the steady window's own warmup by time, --warmup-duration,
// lies inside the measured span by design and is not counted).
func (w *warmupEnd) add(r *record.Record) {
	if r.Phase == record.PhaseWarmup {
		w.last = max(w.last, spanEnd(r)) // 0 for a request never sent
	}
}

// overlap is the warmup overlap of the window [start, end]; false without a warmup or window.
func (w *warmupEnd) overlap(start, end int64) (float64, bool) {
	if w.last == 0 || end <= start {
		return 0, false
	}
	return float64(max(0, min(w.last, end)-start)) / float64(end-start), true
}

// PoorOverlap is the warmup overlap above which a sweep point is poor: a third of its window
// or more was shared with the warmup, and its figures are not its load's.
const PoorOverlap = 1.0 / 3

// Poor says why a point's figures do not describe its load ("" when they do): the median of
// its runs' warmup overlaps is above PoorOverlap.
func (p *PointSummary) Poor() string {
	share := p.Median(func(s *Summary) *float64 { return s.WarmupOverlap })
	if share == nil || *share <= PoorOverlap {
		return ""
	}
	return fmt.Sprintf("poor: %.0f%% of its window was shared with the warmup's requests (more than %.0f%%), so its figures are not its load's; not used by the search or the knee",
		100**share, 100*PoorOverlap)
}
