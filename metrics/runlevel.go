package metrics

import (
	"slices"

	"servebench/record"
)

// runAcc keeps what the run-level metrics need: the [sent, end] span of every measured
// request that was sent, and the tokens of the content events of completed requests per
// millisecond (for peak tokens/s, whose buckets are aligned to a window start known only at
// the end).
type runAcc struct {
	starts, ends []int64   // span of each sent measured request
	busy         int64     // Σ (end − sent), for Little's law
	tokens       tokenHist // content events of completed measured requests
}

// spanEnd is when a sent request stopped occupying the server: done, or when the stream
// never ended cleanly (a failure), the latest moment it was observed.
func spanEnd(r *record.Record) int64 {
	if r.Done > 0 {
		return r.Done
	}
	end := max(r.Sent, r.Headers, r.FirstEvent)
	if n := len(r.Events); n > 0 {
		end = max(end, r.Events[n-1].T)
	}
	return end
}

// addSpan records a measured request's span. Requests that were never sent (a connect
// failure) have none: the window runs from a sent to a done.
func (ra *runAcc) addSpan(r *record.Record) {
	if r.Sent == 0 {
		return
	}
	end := spanEnd(r)
	ra.starts = append(ra.starts, r.Sent)
	ra.ends = append(ra.ends, end)
	ra.busy += end - r.Sent
}

// addEvents counts a completed request's content events for peak tokens/s; one says each
// carried one token though none said so (oneTokenEach).
func (ra *runAcc) addEvents(ev []record.Event, one bool) {
	for _, e := range ev {
		n := e.N
		if one {
			n = 1
		}
		ra.tokens.add(e.T, n)
	}
}

// window: "Measurement window = from the first sent of a measured request to the last done
// of a measured request. Warmup is outside it." Failed requests count (they were in flight).
func (ra *runAcc) window() (start, end int64, ok bool) {
	if len(ra.starts) == 0 {
		return 0, 0, false
	}
	return slices.Min(ra.starts), slices.Max(ra.ends), true
}

// sentSpan returns the first and last sent, for the achieved rate.
func (ra *runAcc) sentSpan() (first, last int64) {
	if len(ra.starts) == 0 {
		return 0, 0
	}
	return slices.Min(ra.starts), slices.Max(ra.starts)
}

// maxInFlight is the exact maximum number of requests in flight (between sent and end),
// by a sweep over the sorted starts and ends. A request that ends at the very nanosecond
// another starts does not overlap it (ends are taken first). Sorts starts and ends in place.
func (ra *runAcc) maxInFlight() int {
	slices.Sort(ra.starts)
	slices.Sort(ra.ends)
	cur, peak, j := 0, 0, 0
	for _, s := range ra.starts {
		for j < len(ra.ends) && ra.ends[j] <= s {
			j++
			cur--
		}
		cur++
		peak = max(peak, cur)
	}
	return peak
}

// peakTokens: "Peak output tokens/s = the largest count of tokens (not events) whose events
// fall in any 1 s bucket." Buckets are [start + k s, start + (k+1) s), aligned to the window
// start, with events placed to the millisecond (tokenHist.peak). An event whose count is
// unknown counts as one token (vLLM's rule; unknownEvents tells how many did). Only completed
// measured requests contribute, as in the throughput numerators.
func (ra *runAcc) peakTokens(start, end int64) (int64, bool) {
	return ra.tokens.peak(start, end)
}

// unknownEvents is how many events entered the peak as one token because their count was
// unknown.
func (ra *runAcc) unknownEvents() int { return ra.tokens.unknown }
