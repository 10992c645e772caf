package stat

import (
	"math"
	"slices"
)

// WarmupJudge decides when a server under load has stopped warming up. It is pure: the
// load runner feeds it over HTTP and the virtual-time driver (package vtime) feeds it in
// virtual time, with the same calls, so the rates measured in virtual time are the live
// method's.
//
// Method. Time from the first warmup send is tiled into windows of equal length L. A
// completed request's events fall into the windows by arrival time: each window's figures
// are the median gap between consecutive events of one request (ITL) over the gaps that end
// in it, and the median TTFT of the requests whose first event is in it. A window is
// complete once no request sent before its end is still in flight, so no later record can
// change it. After each complete window, warming stops when the ITLs of the last Span
// complete windows that have one agree: (max − min)/median ≤ Tolerance, and the Sen slope
// across them, per window, is at most Tolerance/4 of the median, so a steady drift keeps it
// warming even when no two neighbours differ by the tolerance (the old rule's blind spot:
// 1.5% per window passed a 10% neighbour test; this one holds 3 windows to 5% end to end).
//
// Why these choices:
//   - Windows tile time and figures come from events, not from completions: in a
//     synchronised closed loop completions come in bursts milliseconds apart, and a rate over
//     a window's own completions swung from 4.5k to 265k tok/s against a true 730 (issue 22).
//   - TTFT is kept per window (Figures) but not judged: with prompts of varied length, a
//     window's few first tokens swing by tens of per cent on a warm server, and a cold
//     engine slows decode steps as it slows prefill, so ITL carries the signal.
//   - Throughput is not judged here. A closed loop's prefill bursts make throughput over a
//     window shorter than one request swing by tens of per cent on a warm server; at a fixed
//     load shape the token rate follows from ITL and TTFT, and the steady-state check judges
//     throughput over the measured run with windows at least one E2E long.
//   - L is 16 ITLs of the first completed request (at least 50 ms, at most 1 s): short
//     enough that three windows fit in about one request's decode, so warming stops soon
//     after the server settles; long enough to hold many gaps.
type WarmupJudge struct {
	// Tolerance is the ITL's allowed relative spread over the last Span windows (0: 0.1).
	Tolerance float64
	// Span is how many consecutive complete windows must agree (0: 3).
	Span int

	origin   int64 // first send
	started  bool
	l        int64         // window length, ns; 0 until the first completion
	inflight map[int]int64 // id → sent, requests not yet done
	bins     map[int]*wbin // window index → what fell in it, until judged
	early    []earlyObs    // completions before L was known
	figs     [][2]float64  // complete windows' [ITL, TTFT] medians, NaN when undefined
	settled  bool
}

type wbin struct{ gaps, ttfts []float64 }

// minGaps is how many gaps let a window be judged before every request that may add to it
// has finished: a closed loop's requests finish a whole E2E after the window, and waiting
// for them all made measuring begin seconds after a cold phase ended.
const minGaps = 64

type earlyObs struct {
	sent int64
	ev   []int64
}

// Windows is the number of complete windows judged so far.
func (j *WarmupJudge) Windows() int { return len(j.figs) }

// Settled reports whether warming has stopped moving.
func (j *WarmupJudge) Settled() bool { return j.settled }

// WindowLength is L in ns (0 until the first completion).
func (j *WarmupJudge) WindowLength() int64 { return j.l }

// Sent notes that warmup request id was sent at t (ns, on the run's clock).
func (j *WarmupJudge) Sent(id int, t int64) {
	if j.inflight == nil {
		j.inflight, j.bins = make(map[int]int64), make(map[int]*wbin)
	}
	if !j.started {
		j.origin, j.started = t, true
	}
	j.inflight[id] = t
}

// Done takes warmup request id's completion: its send time and its content events' arrival
// times (none for a failed request). It reports whether warming has stopped moving.
func (j *WarmupJudge) Done(id int, sent int64, events []int64) bool {
	if j.inflight == nil {
		j.Sent(id, sent)
	}
	delete(j.inflight, id)
	if j.settled {
		return true
	}
	if j.l == 0 {
		if len(events) < 2 {
			j.early = append(j.early, earlyObs{sent, slices.Clone(events)})
			return false
		}
		itl := float64(events[len(events)-1]-events[0]) / float64(len(events)-1)
		j.l = int64(min(max(16*itl, 50e6), 1e9))
		for _, o := range j.early {
			j.place(o.sent, o.ev)
		}
		j.early = nil
	}
	j.place(sent, events)
	j.judge()
	return j.settled
}

// place puts one request's TTFT and gaps into their windows.
func (j *WarmupJudge) place(sent int64, ev []int64) {
	if len(ev) == 0 {
		return
	}
	if b := j.bin(ev[0]); b != nil {
		b.ttfts = append(b.ttfts, float64(ev[0]-sent))
	}
	for i := 1; i < len(ev); i++ {
		if b := j.bin(ev[i]); b != nil {
			b.gaps = append(b.gaps, float64(ev[i]-ev[i-1]))
		}
	}
}

// bin is the window of an event at t; nil for a window already judged (its figures stand).
func (j *WarmupJudge) bin(t int64) *wbin {
	k := int(max(t-j.origin, 0) / j.l)
	if k < len(j.figs) {
		return nil
	}
	b := j.bins[k]
	if b == nil {
		b = &wbin{}
		j.bins[k] = b
	}
	return b
}

// judge closes every window that is now complete and tests the last Span of them.
func (j *WarmupJudge) judge() {
	oldest := int64(math.MaxInt64)
	for _, s := range j.inflight {
		oldest = min(oldest, s)
	}
	for {
		k := len(j.figs)
		end := j.origin + int64(k+1)*j.l
		b := j.bins[k]
		if !j.hasLater(k) || (oldest < end && (b == nil || len(b.gaps) < minGaps)) {
			return // nothing has reached past it, or requests in flight may still fill it
		}
		delete(j.bins, k)
		f := [2]float64{math.NaN(), math.NaN()}
		if b != nil && len(b.gaps) > 0 {
			f[0] = Median(b.gaps)
		}
		if b != nil && len(b.ttfts) > 0 {
			f[1] = Median(b.ttfts)
		}
		j.figs = append(j.figs, f)
		if j.agree() {
			j.settled = true
			return
		}
	}
}

// hasLater reports whether some event fell after window k: without one, the windows past
// the last event are empty because nothing was sent, not because they are complete.
func (j *WarmupJudge) hasLater(k int) bool {
	for i := range j.bins {
		if i > k {
			return true
		}
	}
	return false
}

// agree reports whether the last Span windows with an ITL agree (see WarmupJudge). Windows
// without a gap (a closed loop's prefill burst) are passed over, not counted against.
func (j *WarmupJudge) agree() bool {
	span, tol := j.Span, j.Tolerance
	if span <= 0 {
		span = 3
	}
	if tol <= 0 {
		tol = 0.1
	}
	var xs []float64
	for i := len(j.figs) - 1; i >= 0 && len(xs) < span; i-- {
		if v := j.figs[i][0]; !math.IsNaN(v) {
			xs = append(xs, v)
		}
	}
	if len(xs) < span {
		return false
	}
	slices.Reverse(xs)
	med := Median(xs)
	return RelChange(slices.Min(xs), slices.Max(xs), med) <= tol && RelChange(0, SenSlope(xs), med) <= tol/4
}
