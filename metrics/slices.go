package metrics

import (
	"slices"
	"time"

	"servebench/record"
)

// Slice is one time slice of a run: what happened in [Start, End) (ns since t0), for figures
// over time as a table. Every request counts, warmup and cooldown too (docs/design/METRICS.md "Its own
// ramp-in and drain": a figure over time counts every request's events in each window), and
// WarmupCompleted says how much of a slice was warmup.
type Slice struct {
	Run        int
	Start, End int64
	// Sent, Completed and Failed count requests sent, completed and failed in the slice;
	// WarmupCompleted is how many of Completed were warmup or cooldown requests.
	Sent, Completed, Failed, WarmupCompleted int
	// OutputTokens counts the tokens of content events that arrived in the slice (one for an
	// event of unknown count, as the peak does).
	OutputTokens int64
	// InFlight is the mean number of requests between sent and done over the slice.
	InFlight float64
	// TTFT is over the completed requests whose first token arrived in the slice; ITL (chunk)
	// over the gaps whose later event arrived in it. ns.
	TTFT, ITL Stat
}

// Slices cuts runs into slices of a fixed width (Add each record, then Slices). The zero
// value is not ready: use NewSlices.
type Slices struct {
	width int64
	ps    []float64
	runs  map[int]*sliceRun
}

type sliceRun struct {
	first, last int64 // the span of the run's requests: first sent, last done
	recs        []sliceRec
}

// sliceRec is what a slice needs of one record.
type sliceRec struct {
	sent, done int64
	ok, warm   bool
	ttftAt     int64 // when the first token arrived (0: none)
	ttft       int64
	events     []record.Event
}

// NewSlices returns a Slices of the given width with the given percentile set (nil: the
// default set).
func NewSlices(width time.Duration, ps []float64) *Slices {
	if len(ps) == 0 {
		ps = DefaultPercentiles
	}
	return &Slices{width: int64(width), ps: ps, runs: map[int]*sliceRun{}}
}

// Add takes one record. Requests that were never sent have no place in time and are left
// out; cancelled ones count as in flight until their end, as failures do.
func (sl *Slices) Add(r *record.Record) {
	if r.Sent == 0 {
		return
	}
	run := sl.runs[r.Run]
	if run == nil {
		run = &sliceRun{first: r.Sent, last: r.Done}
		sl.runs[r.Run] = run
	}
	done := max(r.Done, r.Sent)
	run.first, run.last = min(run.first, r.Sent), max(run.last, done)
	sr := sliceRec{sent: r.Sent, done: done, ok: r.OK(), warm: !r.Measured(), events: slices.Clone(r.Events)}
	if t, ok := ttft(r); ok && sr.ok {
		sr.ttftAt, sr.ttft = r.Events[0].T, t
	}
	run.recs = append(run.recs, sr)
}

// Slices returns every run's slices in run and time order, from the run's first sent; the
// last slice ends at or after its last done.
func (sl *Slices) Slices() []Slice {
	var out []Slice
	runs := make([]int, 0, len(sl.runs))
	for k := range sl.runs {
		runs = append(runs, k)
	}
	slices.Sort(runs)
	for _, k := range runs {
		out = append(out, sl.runSlices(k, sl.runs[k])...)
	}
	return out
}

func (sl *Slices) runSlices(k int, run *sliceRun) []Slice {
	n := int((run.last-run.first)/sl.width) + 1
	out := make([]Slice, n)
	ttfts, itls := make([]sample, n), make([]sample, n)
	at := func(t int64) int { return min(int((t-run.first)/sl.width), n-1) }
	for i := range out {
		out[i] = Slice{Run: k, Start: run.first + int64(i)*sl.width, End: run.first + int64(i+1)*sl.width}
	}
	for _, r := range run.recs {
		out[at(r.sent)].Sent++
		end := &out[at(r.done)]
		switch {
		case !r.ok:
			end.Failed++
		case r.warm:
			end.Completed++
			end.WarmupCompleted++
		default:
			end.Completed++
		}
		for i := at(r.sent); i <= at(r.done); i++ {
			overlap := min(r.done, out[i].End) - max(r.sent, out[i].Start)
			out[i].InFlight += float64(max(overlap, 0)) / float64(sl.width)
		}
		for j, e := range r.events {
			out[at(e.T)].OutputTokens += int64(max(e.N, 1))
			if j > 0 && r.ok {
				itls[at(e.T)].add(float64(e.T - r.events[j-1].T))
			}
		}
		if r.ttftAt > 0 {
			ttfts[at(r.ttftAt)].add(float64(r.ttft))
		}
	}
	for i := range out {
		out[i].TTFT, out[i].ITL = ttfts[i].stat(sl.ps), itls[i].stat(sl.ps)
	}
	return out
}
