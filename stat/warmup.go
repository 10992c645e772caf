package stat

import (
	"math"
	"slices"
)

// WarmupJudge decides when a server under load has stopped warming up. It is pure: the
// load runner feeds it, over HTTP or in virtual time (package vtime runs the same runner),
// so the rates measured in virtual time are the live method's.
//
// Method. Content events are fed as they stream (Event). The windows begin once the
// minimum is behind: Min warmup requests sent, and as many completed as ever streamed at
// once (at most Min). From there, the gaps between consecutive events of one request are
// cut, in arrival order, into windows of G gaps: 16 per request that streamed at once, up
// to 256 gaps, and never fewer than 8 per request. Each window's figure is the 25th percentile of its gaps (ITL p25). After
// each window, warming stops when the last Span windows agree: (max − min)/median ≤
// Tolerance, and the Sen slope across them, per window, at most Tolerance/6 of the median,
// so a steady drift keeps it warming even when no two neighbours differ by the tolerance.
// Or, once warmupTrendMin (10) windows are complete, when the last 2·Span (6) windows show
// no falling trend: Mann–Kendall's exact one-sided p of a fall is at least
// warmupTrendAlpha (0.1). That second path is for a noisy client, whose windows never agree
// within the tolerance.
//
// Why these choices (each measured against the one it replaced, in virtual time: vtime
// TestWarmupAuto*, TestMatrix):
//   - Events stream in. Judging a window only once the requests that ran through it had
//     completed made measuring begin about one E2E plus three windows after a cold phase
//     ended (up to 3 s late at 64 users).
//   - Windows hold a count of gaps, not a span of time. A closed loop's users stay roughly in
//     step: each round is a prefill burst (224 ms steps at 64 users, few gaps) then decode
//     (7.7 ms steps, many gaps), and a window of time that fell inside a burst held only
//     its long gaps, so windows of time flipped between 224 and 7.7 ms on a steady server
//     and warming stopped by luck (up to 33 windows). Counted in gaps, a burst is a small
//     share of any window, and a window's length in time follows the server's speed: long
//     while it is cold, short once warm, so the windows after a cold phase are short.
//   - The 25th percentile, not the median: at 90% of capacity in an open loop, or with
//     short outputs, prefill-mixed steps are near half the gaps and a window's median
//     jumped between the two step times (7 to 100 ms); the fastest quarter are decode
//     steps in nearly every window, and a cold engine slows those as it slows the rest. Not
//     lower: over HTTP on a loaded client, reads that come late shorten a tenth of the gaps
//     to near nothing, and an ITL p10 said warm at twice the warm ITL. Gaps of 0 (events
//     of one read, stamped alike) are left out: they would pull any low quantile to 0.
//   - The origin after the minimum: the first round of a closed loop starts every user's
//     prefill at once, and its windows measure the load's start, not the server's warmth.
//     As many completions as streamed at once (not one per user): 1,024 users against 256
//     sequences would otherwise spend the 2,000-request cap before the first window.
//   - G: over HTTP on a loaded client, 32 gaps at 4 users were noise enough to say warm
//     up to 1.2 s before the cold phase ended; 64 (16 per request) were not. Beyond 256 gaps
//     a window's quantile is steady, and what it needs is to stay short in time: at 64
//     users 16 per request made three windows after the cold phase outlast its bound, 8 did
//     not. One user gets 16 gaps: more made its measuring begin over 1 s late, as the next
//     send waits for the request in flight.
//   - The slope bound is Tolerance/6 per window (1.7% at 10%), not /4: a 3×-cold phase
//     fading over 200 steps drifts about 2% per 8-step window early on.
//   - The noisy-client path. Beside busy loops on a 2-core machine (load 7–22) a window's ITL
//     p25 swings by 28% from one window to the next at the median (38% coefficient of
//     variation after the cold phase, over 89 recorded runs): three windows rarely agree
//     within 10%, and 41 of 67 runs of TestWarmupAutoAgainstColdStart's two cases began
//     measuring over 3.5 s after the cold phase or ran to the 2,000-request cap. A rank test
//     of a fall judges it against the windows' own noise, however large. Replayed over
//     those runs' records: 19 of 67 late, and the same 4 early stops as before (all from the
//     agreement path); the steady simulator stopped within 4 to 11 windows in 32 of 32
//     (68 to 2,004 requests before). warmupTrendMin: with 8 windows the path stopped 4 runs
//     on the flat-looking start of the custom case's ramp (4× fading over 300 steps is 4.5%
//     a window at first), with 9 or more none. The windows it tests are 2·Span, so a fall
//     must persist over six windows to keep warming; a fall smaller than the windows' own
//     noise over six windows is not seen (metrics' LateWarmup then names the measured
//     requests it slowed). The client's health windows (record.Quality) were not used to
//     leave windows out: at those loads 70% of their seconds cross the steady check's
//     disturbance thresholds.
//   - TTFT is kept per window (Figures) but not judged: with prompts of varied length, a
//     window's few first tokens swing by tens of per cent on a warm server, and a cold
//     engine slows decode steps as it slows prefill, so ITL carries the signal.
//   - Throughput is not judged here: a closed loop's prefill bursts make throughput over a
//     short window swing by tens of per cent on a warm server; the steady-state check
//     judges it over the measured run with windows at least one E2E long.
type WarmupJudge struct {
	// Tolerance is the ITL's allowed relative spread over the last Span windows (0: 0.1).
	Tolerance float64
	// Span is how many consecutive complete windows must agree (0: 3).
	Span int
	// Min is the minimum warmup, one request per slot (runspec.DefaultWarmup; 0: 1): the
	// windows begin once it was sent and as many as ever streamed at once (at most Min)
	// have completed.
	Min int

	g       int           // gaps per window; 0 until the windows begin
	origin  int64         // the latest event when the windows began
	reqs    map[int]*wreq // id → what was seen of it, until done
	done    int           // requests completed
	stream  int           // requests with an event, not yet done
	sent    int           // requests sent
	peak    int           // the most requests streaming at once before the origin
	cur     wbin          // the window being filled
	figs    [][2]float64  // complete windows' [ITL p25, TTFT median], NaN when undefined
	latest  int64         // the latest event time seen
	settled bool
}

type wreq struct {
	sent, last int64
	n          int // events seen
}

type wbin struct{ gaps, ttfts []float64 }

// Windows is the number of complete windows judged so far.
func (j *WarmupJudge) Windows() int { return len(j.figs) }

// Settled reports whether warming has stopped moving.
func (j *WarmupJudge) Settled() bool { return j.settled }

// WindowGaps is G, the gaps per window (0 until the windows begin).
func (j *WarmupJudge) WindowGaps() int { return j.g }

// Origin is where the windows begin (ns, on the run's clock; 0 until they do).
func (j *WarmupJudge) Origin() int64 { return j.origin }

// Figures is the complete windows' [ITL p25, TTFT median] in ns, the TTFT NaN where a
// window had none.
func (j *WarmupJudge) Figures() [][2]float64 { return slices.Clone(j.figs) }

// Sent notes that warmup request id was sent at t (ns, on the run's clock).
func (j *WarmupJudge) Sent(id int, t int64) {
	if j.reqs == nil {
		j.reqs = make(map[int]*wreq)
	}
	j.reqs[id] = &wreq{sent: t}
	j.sent++
}

// Event takes one content event of warmup request id at t, as it arrives. It reports
// whether warming has stopped moving.
func (j *WarmupJudge) Event(id int, t int64) bool {
	r := j.reqs[id]
	if r == nil || j.settled {
		return j.settled
	}
	j.take(r, t)
	j.judge()
	return j.settled
}

// take places one event of r: its TTFT or its gap goes into the window being filled, once
// the windows have begun.
func (j *WarmupJudge) take(r *wreq, t int64) {
	j.latest = max(j.latest, t)
	if j.g > 0 {
		if r.n == 0 {
			j.cur.ttfts = append(j.cur.ttfts, float64(t-r.sent))
		} else if t > r.last { // a gap of 0 is two events of one read, not a decode step
			j.cur.gaps = append(j.cur.gaps, float64(t-r.last))
		}
	}
	if r.n == 0 {
		j.stream++
		j.peak = max(j.peak, j.stream)
	}
	r.n++
	r.last = t
}

// Done takes warmup request id's completion: its send time and its content events' arrival
// times (none for a failed request); the events not yet fed by Event are taken now, so a
// caller that does not stream still works (each window then waits for its requests). It
// reports whether warming has stopped moving.
func (j *WarmupJudge) Done(id int, sent int64, events []int64) bool {
	if j.reqs == nil || j.reqs[id] == nil {
		j.Sent(id, sent)
	}
	r := j.reqs[id]
	delete(j.reqs, id)
	if j.settled {
		return true
	}
	for _, t := range events[min(r.n, len(events)):] {
		j.take(r, t)
	}
	if r.n > 0 {
		j.stream--
	}
	j.done++
	if m := max(j.Min, 1); j.g == 0 && j.peak > 0 && j.sent >= m && j.done >= min(m, j.peak) {
		j.begin()
	}
	j.judge()
	return j.settled
}

// begin starts the windows and sizes them (see WarmupJudge).
func (j *WarmupJudge) begin() {
	j.g = max(min(16*j.peak, 256), warmupPerSlot*j.peak)
	j.origin = j.latest
}

// warmupQuantile is the share of a window's gaps below its figure (see WarmupJudge).
const (
	warmupQuantile = 0.25 // a window's figure: this quantile of its gaps
	warmupPerSlot  = 8    // gaps per window per request that streamed at once, at least
	warmupSlope    = 6    // the slope bound is Tolerance/warmupSlope per window
	// The noisy-client path (see WarmupJudge): after warmupTrendMin windows, warm once the
	// last 2·Span windows show no falling trend, Mann–Kendall's exact one-sided p of a fall
	// at least warmupTrendAlpha.
	warmupTrendMin   = 10
	warmupTrendAlpha = 0.1
)

// judge closes the window being filled once it holds G gaps and tests the last Span
// windows.
func (j *WarmupJudge) judge() {
	if j.g == 0 || len(j.cur.gaps) < j.g {
		return
	}
	f := [2]float64{shiftQuantile(shiftSorted(j.cur.gaps), warmupQuantile), math.NaN()}
	if len(j.cur.ttfts) > 0 {
		f[1] = Median(j.cur.ttfts)
	}
	j.cur = wbin{gaps: j.cur.gaps[:0], ttfts: j.cur.ttfts[:0]}
	j.figs = append(j.figs, f)
	j.settled = j.agree()
}

// agree reports whether the last Span windows agree (see WarmupJudge).
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
	if RelChange(slices.Min(xs), slices.Max(xs), med) <= tol && RelChange(0, SenSlope(xs), med) <= tol/warmupSlope {
		return true
	}
	return j.trendless(2 * span)
}

// trendless reports, once warmupTrendMin windows are complete, whether the last k windows'
// ITL p25 show no falling trend: the exact one-sided Mann–Kendall p of a fall is at least
// warmupTrendAlpha (see WarmupJudge). A rank test, so the noise it judges a fall against is
// the windows' own, however busy the client.
func (j *WarmupJudge) trendless(k int) bool {
	if len(j.figs) < max(warmupTrendMin, k) {
		return false
	}
	var xs []float64
	for _, f := range j.figs[len(j.figs)-k:] {
		if !math.IsNaN(f[0]) {
			xs = append(xs, f[0])
		}
	}
	if len(xs) < k {
		return false
	}
	return fallP(xs) >= warmupTrendAlpha
}

// fallP is the exact one-sided Mann–Kendall p of a falling trend in xs (index order): the
// chance, with no trend, of an S as low as xs's; 1 where xs does not fall (S ≥ 0: the p is
// then above 1/2, and only its place against a level below 1/2 is used).
func fallP(xs []float64) float64 {
	s := 0.0
	for i := range xs {
		for k := i + 1; k < len(xs); k++ {
			s += mkSign(xs[k] - xs[i])
		}
	}
	if s >= 0 {
		return 1
	}
	return MannKendallExactP(len(xs), s) / 2
}
