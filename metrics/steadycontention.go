package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"servebench/stat"
)

// Contention: a closed loop's TTFT judged at equal contention.
//
// A request's TTFT depends on how many other prompts the server prefilled beside it, and in a
// closed loop that is the users' phase: users whose requests all take about one E2E keep the
// spacing they fell into, and one late engine step can merge two users' prefills for the rest
// of the run. Over HTTP against the simulator such a merge doubled the window TTFT on the same
// server, the check called it a rise, and compare held such runs PROVISIONAL (figures:
// docs/metrics.md "Judging the server, not the phase"; docs/steady-evidence.md "Figures moved
// from the code's comments").
//
// So a closed loop's TTFT drift is judged again at equal contention: at equal work done by
// the server while the request waited for its first token. Over each request's TTFT interval
// (sent → first content event) two figures are read from the records, any phase:
//
//   - prefill work: the prompt tokens of every request whose TTFT interval overlapped this
//     one's, each weighted by the share of its interval inside this one's (its own prompt
//     whole): their prefill spread evenly over their intervals;
//   - decode work: the streamed events (after their first) other requests received inside
//     the interval: the decode steps the engine ran for them meanwhile, one event per
//     running request and step. (Spreading each request's tokens evenly from its first to
//     its last event was tried: a cohort's first token comes from its prefill and the next
//     only after the other users' prefills, and the spread decode misplaced that gap.)
//
// A continuous-batching engine's TTFT is about a fixed overhead plus the prefill work over its
// prefill rate plus the decode steps it ran meanwhile, whatever the phase. The coefficients
// (ms per 1,000 prompt tokens and per 1,000 others' events) are least squares within windows
// (each window's requests about their own window's means), so a server that changed over time
// does not move them (withinFit); the series at equal contention is each window's median of
// TTFT less the fitted effect of its requests' work about the mean work of every window. Two
// simpler figures were tried first on the same HTTP runs: a count of the overlapping requests
// (compare's contention levels) left a run whose users merged into one cohort with no level
// common to its first and last thirds, so nothing could be judged; and prefill work alone,
// fitted where users are spread out (a prefill among the others' decode steps), overstated a
// cohort's TTFT (all users prefill together, nobody decodes). docs/metrics.md "Steady state"
// has the figures and the rates measured over HTTP.
//
// The drift is the users' phase, not the server's, and is explained (named in a note, not
// counted) when all of these hold:
//
//   - the prefill coefficient is positive (more work can only lengthen TTFT; a negative decode
//     coefficient drops that part);
//   - the fitted effect of the change of the windows' mean work between the first and last
//     thirds accounts for at least half of TTFT's change between them, in its direction;
//   - the series at equal contention moved by less than the size gate (10%) between the
//     medians of its first and last thirds, and does not drift by the same trend and step
//     tests at the series' α as any series: judged at equal contention, TTFT is flat.
//
// Throttling that slows every step alike leaves the work where it was (TTFT intervals, E2E
// and each interval's overlap with the others' scale together) and raises TTFT at equal work:
// it is still flagged. A slower prefill lengthens every interval and raises the work somewhat,
// but TTFT at equal work rises with it, and that is what is judged.
//
// An open loop is left out: its arrivals do not follow the server, so a server that slowed
// lengthens every TTFT interval against the same arrivals and raises the work by itself;
// there the realised arrival rate is the covariate (steadyload.go).
// The users' phase moved (Contention.Moved: named in the notes, and counted by the
// validation) when the mean level changed by at least contentionMinMove requests and
// contentionMinRel of the larger. They choose words, never a verdict, so SteadyPolicy does
// not list them.
const (
	contentionMinMove = 0.5
	contentionMinRel  = 0.25
)

// Contention is how a closed loop's contention moved over the region the steady check tested,
// and what TTFT did at equal contention.
type Contention struct {
	// From and To are the mean contention level (other requests whose TTFT interval overlapped
	// each measured request's) over the first and last thirds of the windows; WorkFrom and
	// WorkTo the mean prefill work (prompt tokens) in a request's TTFT interval.
	From     float64 `json:"from"`
	To       float64 `json:"to"`
	WorkFrom float64 `json:"work_from"`
	WorkTo   float64 `json:"work_to"`
	// Moved is true when the mean level changed from the first third to the last by at
	// least half a request and a quarter of the larger: the users' phase moved. It
	// describes; the verdict rests on the rules above. At is where the level's largest step
	// is, in seconds since the run's start, and Into the same from the first window.
	Moved bool    `json:"moved"`
	At    float64 `json:"at_s"`
	Into  float64 `json:"into_s"`
	// PrefillMs and DecodeMs are the within-window coefficients of TTFT on the prefill and
	// decode work, ms per 1,000 prompt tokens and per 1,000 others' events; nil when they
	// could not be estimated.
	PrefillMs *float64 `json:"ttft_ms_per_1k_prefill_tokens,omitempty"`
	DecodeMs  *float64 `json:"ttft_ms_per_1k_decode_events,omitempty"`
	// TTFTAtEqual is the relative change of the series at equal contention between the
	// medians of its first and last thirds.
	TTFTAtEqual *float64 `json:"ttft_change_at_equal_contention,omitempty"`
	// Explained are the drifts the contention explained (metric "ttft").
	Explained []Drift `json:"explained,omitempty"`
}

// condObs is one measured request of a window, for the judgement at equal contention.
type condObs struct {
	level int        // other requests whose TTFT interval overlapped its own
	work  [2]float64 // prefill work (tokens) and decode work (events) in its TTFT interval
	v     float64    // TTFT, ms
}

// contentionWork sets, for each request of in (send order), its contention level — the other
// requests, any phase, whose TTFT interval [sent, first) overlapped its own — and the prefill
// and decode work in its TTFT interval (see the comment at the top). A request's level is −1
// when its TTFT is undefined. A request of unknown prompt length counts one token.
func (s *steadyAcc) contentionWork(in []steadyObs) ([]int, [][2]float64) {
	type iv struct {
		a, b int64
		p    float64
	}
	var pre []iv
	longPre := int64(0)
	for _, sp := range s.spans {
		if sp.first <= 0 || sp.first < sp.sent {
			continue
		}
		pre = append(pre, iv{sp.sent, sp.first, float64(max(sp.prompt, 1))})
		longPre = max(longPre, sp.first-sp.sent)
	}
	slices.SortFunc(pre, func(x, y iv) int { return cmp.Compare(x.a, y.a) })
	slices.Sort(s.events)
	// overlapping yields the share of each interval of xs (sorted by start, none longer than
	// long) that lies inside [a, b), with its amount.
	overlapping := func(xs []iv, long, a, b int64, f func(share, amount float64)) {
		j, _ := slices.BinarySearchFunc(xs, a-long, func(x iv, t int64) int { return cmp.Compare(x.a, t) })
		for ; j < len(xs) && xs[j].a < b; j++ {
			x := xs[j]
			if x.b <= a && !(x.b == a && x.a == a) {
				continue
			}
			share := 1.0
			if x.b > x.a {
				share = float64(min(b, x.b)-max(a, x.a)) / float64(x.b-x.a)
			}
			f(share, x.p)
		}
	}
	lv, work := make([]int, len(in)), make([][2]float64, len(in))
	for i, o := range in {
		lv[i] = -1 // the request's own interval is one of those counted
		if o.first <= 0 {
			continue
		}
		overlapping(pre, longPre, o.sent, o.first, func(share, p float64) {
			lv[i]++
			work[i][0] += share * p
		})
		lv[i] = max(lv[i], 0)
		// the others' events after their first, strictly inside (sent, first)
		lo, _ := slices.BinarySearch(s.events, o.sent+1)
		hi, _ := slices.BinarySearch(s.events, o.first)
		work[i][1] = float64(max(hi-lo, 0))
	}
	return lv, work
}

// contentionWindows is, per count window, its requests' contention and TTFT.
func (s *steadyAcc) contentionWindows(in []steadyObs, bounds []int) [][]condObs {
	if s.eventsCapped {
		return nil
	}
	lv, work := s.contentionWork(in)
	out := make([][]condObs, 0, len(bounds))
	for i := 0; i+1 < len(bounds); i++ {
		var w []condObs
		for j := bounds[i]; j < bounds[i+1]; j++ {
			if v := float64(in[j].ttft); lv[j] >= 0 && !math.IsNaN(v) {
				w = append(w, condObs{level: lv[j], work: work[j], v: v / 1e6})
			}
		}
		if len(w) > 0 {
			out = append(out, w)
		}
	}
	return out
}

// contention summarises the TTFT series' windows (sr.win) and judges drift d (when given)
// at equal contention; alpha is the series' level. nil when the series has no windows to
// read contention from.
func contention(sr series, d *Drift, alpha, trim float64) *Contention {
	n := len(sr.win)
	if n < steadyMinWindows || n != len(sr.xs) {
		return nil
	}
	lv, work := make([]float64, n), make([][2]float64, n)
	for i, w := range sr.win {
		for _, o := range w {
			lv[i] += float64(o.level)
			work[i][0] += o.work[0] / float64(len(w))
			work[i][1] += o.work[1] / float64(len(w))
		}
		lv[i] /= float64(len(w))
	}
	third := max(1, n/3)
	thirds := func(xs []float64) (float64, float64) { return stat.Median(xs[:third]), stat.Median(xs[n-third:]) }
	col := func(k int) []float64 {
		out := make([]float64, n)
		for i := range work {
			out[i] = work[i][k]
		}
		return out
	}
	c := &Contention{}
	c.From, c.To = thirds(lv)
	c.WorkFrom, c.WorkTo = thirds(col(0))
	c.Moved = math.Abs(c.To-c.From) >= contentionMinMove && stat.RelChange(c.From, c.To, max(c.From, c.To)) >= contentionMinRel
	at := stepAt(lv)
	c.At, c.Into = sr.spans[at][0]/1e9, (sr.spans[at][0]-sr.spans[0][0])/1e9
	coef, ok := withinFit(sr.win, trim)
	if !ok {
		return c
	}
	c.PrefillMs, c.DecodeMs = ptr(1000*coef[0]), ptr(1000*coef[1])
	eq := sr
	eq.xs = atEqual(sr.win, coef)
	if first, last := thirds(eq.xs); first > 0 {
		c.TTFTAtEqual = ptr(last/first - 1)
	}
	// the part of the raw change that the work in the intervals accounts for
	part := 0.0
	for k := range coef {
		a, b := thirds(col(k))
		part += coef[k] * (b - a)
	}
	first, last := thirds(sr.xs)
	delta := last - first
	if d == nil || delta == 0 || part/delta < explainShare || c.TTFTAtEqual == nil || math.Abs(*c.TTFTAtEqual) >= steadyMinChange {
		return c
	}
	if _, still := trend(eq, alpha, sr.shift); !still {
		c.Explained = append(c.Explained, *d)
	}
	return c
}

// withinFit is the least-squares coefficients of TTFT (ms) on the prefill and decode work
// (tokens, events) within windows: each window's requests about their own window's means, so
// that a change of the server over time cannot leak into them. It fits twice: the second time
// without the requests whose residual is more than trim (trimMADs) robust standard deviations
// (1.4826 × MAD) from the median residual, since one stall inside a window where the users
// merged moved the prefill cost a long way (figures: docs/steady-evidence.md "Figures moved from the code's comments"). A negative decode coefficient drops the decode part (refitted on the prefill
// alone); false when the prefill work has no spread within windows or its coefficient is not
// positive (more work can only lengthen TTFT).
func withinFit(win [][]condObs, trim float64) ([2]float64, bool) {
	c, ok := fitWithin(win)
	if !ok {
		return c, false
	}
	var res []float64
	resid := func(w []condObs) []float64 {
		m0, m1, my := windowMeans(w)
		out := make([]float64, len(w))
		for i, o := range w {
			out[i] = o.v - my - c[0]*(o.work[0]-m0) - c[1]*(o.work[1]-m1)
		}
		return out
	}
	for _, w := range win {
		res = append(res, resid(w)...)
	}
	med := stat.Median(res)
	mad := 0.0
	for i := range res {
		res[i] = math.Abs(res[i] - med)
	}
	if mad = 1.4826 * stat.Median(res); mad <= 0 {
		return c, true
	}
	trimmed := make([][]condObs, 0, len(win))
	for _, w := range win {
		var kept []condObs
		for i, r := range resid(w) {
			if math.Abs(r-med) <= trim*mad {
				kept = append(kept, w[i])
			}
		}
		if len(kept) > 1 {
			trimmed = append(trimmed, kept)
		}
	}
	return fitWithin(trimmed)
}

// windowMeans is the mean prefill work, decode work and TTFT of a window's requests.
func windowMeans(w []condObs) (m0, m1, my float64) {
	for _, o := range w {
		m0, m1, my = m0+o.work[0], m1+o.work[1], my+o.v
	}
	k := float64(len(w))
	return m0 / k, m1 / k, my / k
}

// fitWithin is one least-squares fit of withinFit (stat.LeastSquares on the requests'
// work and TTFT about their own window's means); without a positive decode coefficient, or
// when the two kinds of work are collinear, the prefill work alone.
func fitWithin(win [][]condObs) ([2]float64, bool) {
	var d0, d1, dy []float64
	for _, w := range win {
		m0, m1, my := windowMeans(w)
		for _, o := range w {
			d0, d1, dy = append(d0, o.work[0]-m0), append(d1, o.work[1]-m1), append(dy, o.v-my)
		}
	}
	if b, ok := stat.LeastSquares(dy, [][]float64{d0, d1}); ok && b[1] > 0 {
		return [2]float64{b[0], b[1]}, b[0] > 0
	}
	if b, ok := stat.LeastSquares(dy, [][]float64{d0}); ok {
		return [2]float64{b[0], 0}, b[0] > 0
	}
	return [2]float64{}, false
}

// stepAt is the first window after the largest step of xs: the split (one window a side at
// least) with the largest difference between the means before and after it.
func stepAt(xs []float64) int {
	best, at := -1.0, len(xs)/2
	for i := 1; i < len(xs); i++ {
		if d := math.Abs(stat.Mean(xs[i:]) - stat.Mean(xs[:i])); d > best {
			best, at = d, i
		}
	}
	return at
}

// atEqual is the series at equal contention: each window's median of its requests' TTFT less
// the fitted effect of their work about the mean work of every window's requests.
func atEqual(win [][]condObs, coef [2]float64) []float64 {
	var mean [2]float64
	k := 0
	for _, w := range win {
		for _, o := range w {
			mean[0], mean[1] = mean[0]+o.work[0], mean[1]+o.work[1]
			k++
		}
	}
	mean[0], mean[1] = mean[0]/float64(k), mean[1]/float64(k)
	out := make([]float64, len(win))
	var vs []float64
	for i, w := range win {
		vs = vs[:0]
		for _, o := range w {
			vs = append(vs, o.v-coef[0]*(o.work[0]-mean[0])-coef[1]*(o.work[1]-mean[1]))
		}
		out[i] = stat.Median(vs)
	}
	return out
}

// phaseCovariate names a closed loop's windows' mean contention level as a covariate of its
// output throughput: users merged into cohorts cycle at another pace on the same server.
const phaseCovariate = "the users' phase (the requests each TTFT overlapped)"

// flatAtEqual says whether TTFT at equal contention moved by less than the size gate: only
// then may the users' phase explain a drift of the output throughput. A server that changed
// moves TTFT at equal contention, and its throughput drift is its own: with the phase
// covariate alone, throttled runs over HTTP had their throughput fall "explained" by the
// contention the slower server's cohorts showed (figures: docs/steady-evidence.md "Figures moved from the code's comments").
func flatAtEqual(c *Contention) bool {
	return c != nil && c.TTFTAtEqual != nil && math.Abs(*c.TTFTAtEqual) < steadyMinChange
}

// phaseByTime is, per time window of length w from start, the mean contention level of the
// measured requests sent in it (the previous window's where none was sent).
func (s *steadyAcc) phaseByTime(start, w float64, k int) []float64 {
	var in []steadyObs
	for _, o := range s.obs {
		if i := (float64(o.sent) - start) / w; i >= 0 && i < float64(k) {
			in = append(in, o)
		}
	}
	lv, work := s.contentionWork(in)
	sum, cnt := make([]float64, k), make([]float64, k)
	for j, o := range in {
		if lv[j] >= 0 {
			i := int((float64(o.sent) - start) / w)
			sum[i] += work[j][0]
			cnt[i]++
		}
	}
	out := make([]float64, k)
	for i := range out {
		switch {
		case cnt[i] > 0:
			out[i] = sum[i] / cnt[i]
		case i > 0:
			out[i] = out[i-1]
		}
	}
	return out
}

// contentionNote is the information note for each drift the contention explained.
func contentionNote(st *Steadiness) []Warning {
	if st == nil || st.Contention == nil {
		return nil
	}
	c := st.Contention
	var out []Warning
	for _, d := range c.Explained {
		if d.Metric != "ttft" {
			out = append(out, warn(Info, "",
				"%s %s %.0f%% with the users' phase, not with the server: each measured request's TTFT overlapped %.1f others' on average over the first third of the window, %.1f over the last (the users %s %.1f s into it), and the output throughput does not drift once the windows' contention is accounted for, so the steady verdict does not count it (see docs/metrics.md \"Steady state\")",
				driftName(d.Metric), d.Direction, 100*d.Change, c.From, c.To, phaseVerb(c), c.Into))
			continue
		}
		out = append(out, warn(Info, "",
			"%s %s %.0f%% with contention, not with the server: %s; at equal contention TTFT moved %+.1f%%, so the steady verdict does not count it (see docs/metrics.md \"Steady state\")",
			driftName(d.Metric), d.Direction, 100*d.Change, c.what(), 100**c.TTFTAtEqual))
	}
	return out
}

// atEqualNote adds to a TTFT drift that stands what TTFT did at equal contention, the users'
// phase taken out ("" for other drifts or without the figure).
func atEqualNote(c *Contention, d Drift) string {
	if c == nil || c.TTFTAtEqual == nil || d.Metric != "ttft" {
		return ""
	}
	return fmt.Sprintf("; at equal contention, the users' phase taken out, TTFT moved %+.0f%%", 100**c.TTFTAtEqual)
}

// phaseVerb says how the users' phase moved: merged (more overlap) or spread.
func phaseVerb(c *Contention) string {
	if c.To > c.From {
		return "merged"
	}
	return "spread out"
}

// explainedText is the series check's note for a drift the contention explained.
func explainedText(d Drift, c *Contention) string {
	return fmt.Sprintf("%s %s %.0f%% with contention: %s; at equal contention TTFT moved %+.1f%%",
		driftName(d.Metric), d.Direction, 100*d.Change, c.what(), 100**c.TTFTAtEqual)
}

// what says how the contention moved: the users' phase when it moved (Moved), else the work
// the server did in the requests' TTFT intervals.
func (c *Contention) what() string {
	if c.Moved {
		return fmt.Sprintf("the users' phase %s %.1f s into the window (each measured request's TTFT overlapped %.1f others' on average before, %.1f after)",
			phaseVerb(c), c.Into, c.From, c.To)
	}
	return fmt.Sprintf("the server prefilled %.0f prompt tokens on average while a request waited for its first token over the first third of the window, %.0f over the last",
		c.WorkFrom, c.WorkTo)
}

// markContention notes on the series' check that the contention explained its drift.
func markContention(checks []SeriesCheck, d Drift, c *Contention) {
	for i := range checks {
		if checks[i].Metric == d.Metric {
			checks[i].Explained = explainedText(d, c)
		}
	}
}
