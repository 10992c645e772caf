package metrics

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"servebench/record"
	"servebench/stat"
)

// Steady-state check: was the server steady during the measurement window?
//
// Series. Each figure is a series of windows, and each series is tested on its own:
//
//   - ttft, itl (and client_queue): the measured, completed requests of the region (below)
//     in send order are cut into windows of equal request count (not equal time: a
//     synchronised closed loop leaves most equal-time windows empty), and a window's figure
//     is the median of its requests' TTFT, per-request mean gap between events ((last −
//     first)/(events − 1): a median gap is 0 when the client coalesced events, and a zero
//     median must give no "rose +Inf%"), or client queue time. A closed loop's window holds
//     at least one request per user (a generation of the loop), an open loop's the arrivals
//     of one E2E.
//   - output_throughput and in_flight (open loops): equal-time windows over the region, each
//     at least one E2E long. Tokens and time in flight are counted from every request's
//     events, warmup and cooldown included, so a window is never short of tokens because
//     measured requests had not finished yet (the old design counted measured completions
//     only, and every run whose requests lasted a quarter of its sending span was flagged).
//
// The region leaves out the ramp-in and the drain (see region and inRegion): from the later
// of the first measured send and the run's first send plus one E2E (a closed loop whose
// measured phase starts on a drained server: its first measured send plus one E2E), to the
// last measured send, and for the per-request series not past one window's least length
// before the last send of any phase.
//
// A series with fewer than steadyMinWindows windows is not tested and says so; a run none
// of whose series could be tested is "too few windows", never "steady".
//
// Test. Mann–Kendall (stat.MannKendall) with the variance widened for the windows' serial
// correlation (Yue & Wang 2004), and a step test (stat.ShiftTest) for the change that begins
// part-way, each at α/2, with α = steadyFamilyAlpha / (series tested) (Bonferroni: the chance
// that any series of a steady run is flagged is at most the family α, before the size gate).
// A step counts only where some split separates its sides by rank (shiftMinSeparation).
// A series drifts when p < α and its size, the change between the medians of its first and
// last thirds relative to its median, is at least steadyMinChange, in the direction of the
// change: significance alone would flag a 1% trend in a long run, size alone a noisy short
// one. A zero median never gives an infinite size (stat.RelChange).
//
// Closed loops. A TTFT or ITL drift is kept only when E2E moved with it (cycled).
//
// Queueing. An open loop is "unbounded queueing" only when requests in flight rose over the
// region (which leaves out the ramp-in to λ·E2E) and were still rising over its last half
// by at least steadyMinChange: a server that slowed once (throttling) raises λ·E2E to a new
// level and stops; a queue above capacity grows to the end.
//
// The constants and the rules' order are SteadyPolicy's (steadypolicy.go); the error rates
// measured on recorded runs are in docs/steady-evidence.md.

// Drift is one metric's trend over the measurement window.
type Drift struct {
	Metric    string  `json:"metric"`     // "ttft", "itl", "output_throughput", "in_flight", "client_queue"
	Direction string  `json:"direction"`  // "rose" or "fell"
	PerMinute float64 `json:"per_minute"` // the change per minute, in the metric's unit (ms, tok/s, requests)
	Unit      string  `json:"unit"`
	Change    float64 `json:"change"` // last third's median − first third's, over the series' median
	P         float64 `json:"p"`      // two-sided p: the smaller of Mann–Kendall's and the shift test's, ×2; corrected for serial correlation
	// Why are the rules of SteadyPolicy that judged this drift, with their figures.
	Why []Step `json:"why,omitempty"`
}

// SeriesCheck says whether one figure's series was tested, and over how many windows.
type SeriesCheck struct {
	Metric  string `json:"metric"`
	Windows int    `json:"windows"`
	Tested  bool   `json:"tested"`
	Reason  string `json:"reason,omitempty"` // why it was not tested
	// Explained names what the windows received (arrival rate, lengths) that explained a
	// drift of the raw series: the drift is the workload's dice, not the server's.
	Explained string `json:"explained,omitempty"`
}

// Steadiness is the verdict of the steady-state check.
type Steadiness struct {
	// Tested is false when no series could be tested (Reason says why): too few requests,
	// or too few windows.
	Tested bool   `json:"tested"`
	Reason string `json:"reason,omitempty"`
	// Windows is the most windows any tested series had.
	Windows int     `json:"windows"`
	Steady  bool    `json:"steady"`
	Drifts  []Drift `json:"drifts,omitempty"`
	// Series lists every figure considered, tested or not.
	Series []SeriesCheck `json:"series,omitempty"`
	// Alpha is the significance level each tested series was held to (the family α over
	// the number of series tested).
	Alpha float64 `json:"alpha,omitempty"`
	// Queueing is true for an open loop whose requests in flight grew through the window and
	// were still growing at its end: the arrival rate is above the server's capacity and the
	// run measures a growing queue, not the server.
	Queueing bool `json:"unbounded_queueing"`
	// Queue is the growth of requests in flight or waiting that made Queueing true.
	Queue *Queue `json:"queue,omitempty"`
	// Transient is an initial transient inside the measured requests: their first ones were
	// slower than the rest (a cold server the warmup did not cover).
	Transient *Transient `json:"transient,omitempty"`
	// Disturbance is when the client itself was disturbed (its own health, record.Quality's
	// windows, and its sends' lateness): a drift that the series without the windows that
	// fell in it no longer shows is the client's, named there and not counted.
	Disturbance *Disturbance `json:"client_disturbed,omitempty"`
	// ClientDrift is a trend in an open loop's client queue time (the sends' lateness): the
	// load generator's health, named in a warning and not counted against the server.
	ClientDrift *Drift `json:"client_drift,omitempty"`
	// Contention is how a closed loop's contention (the requests whose TTFT interval
	// overlapped each request's) moved over the windows, and the TTFT drifts it explained
	// (steadycontention.go): the users' phase, not the server.
	Contention *Contention `json:"contention,omitempty"`
	// PolicyVersion is SteadyPolicy's version, and Why the trace of the verdict: every rule
	// that fired, in the policy's order, with the figures it read (docs/steady-policy.md).
	PolicyVersion string `json:"policy_version"`
	Why           []Step `json:"why"`
}

// steadyObs is what the check keeps of one measured, completed request.
type steadyObs struct {
	sent, end   int64
	sched       int64   // the intended send time (sent when unknown or later)
	first       int64   // the first content event (0: none)
	ttft, itl   float32 // ns; NaN when undefined
	queue       float32 // dispatched − scheduled, ns
	prompt, out float32 // prompt and output tokens: what the request asked of the server
	e2e         float32 // last event − sent, ns; NaN when no event
}

// loadSpan is what the check keeps of every request, any phase: its time in flight and
// its output tokens, spread evenly from its first to its last event.
type loadSpan struct {
	sched, sent, first, end int64
	late                    int64 // dispatched − scheduled: the sender's lateness (0: not dispatched)
	tokens, prompt          int32
}

type steadyAcc struct {
	obs   []steadyObs
	spans []loadSpan
	// events are the arrival times of every request's streamed events after its first, any
	// phase, up to maxContentionEvents: the decode work in a TTFT interval
	// (steadycontention.go).
	events       []int64
	eventsCapped bool
	// skip is a rule of SteadyPolicy the check leaves out, or one of its constants (by its
	// name in the policy) the check neutralises (see off): the ablation of the recorded sets'
	// test, never set otherwise.
	skip string
}

// maxContentionEvents is the most streamed events the check keeps (8 bytes each, 32 MiB): a
// memory bound of the code, not a constant of the policy (docs/limits.md). A run with more is
// not judged at equal contention, and its drifts stand.
const maxContentionEvents = 1 << 22

// off reports whether the ablation neutralises the policy's constant name: its gate is not
// applied (a ratio, share or margin of 0, a threshold or cap of +Inf), so the recorded sets'
// test can count the verdicts each constant decides.
func (s *steadyAcc) off(name string) bool { return s.skip == name }

// addLoad keeps any sent request's span (warmup, cooldown and failed ones too).
func (s *steadyAcc) addLoad(r *record.Record) {
	if r.Sent <= 0 {
		return
	}
	sp := loadSpan{sched: r.Scheduled, sent: r.Sent, end: r.Done, prompt: int32(r.PromptTokens)}
	if sp.sched <= 0 || sp.sched > sp.sent {
		sp.sched = sp.sent
	}
	if r.Dispatched > 0 && r.Scheduled > 0 {
		sp.late = max(0, r.Dispatched-r.Scheduled)
	}
	if n := len(r.Events); n > 0 {
		if len(s.events)+n <= maxContentionEvents {
			for _, e := range r.Events[1:] {
				s.events = append(s.events, e.T)
			}
		} else {
			s.events = s.events[:0:0] // too many to keep: no judgement at equal contention
			s.eventsCapped = true
		}
		sp.first, sp.end = r.Events[0].T, max(sp.end, r.Events[n-1].T)
		sp.tokens = int32(r.OutputTokens)
		if sp.tokens == 0 {
			sp.tokens = int32(n)
		}
	}
	if sp.end < sp.sent {
		sp.end = -1 // never finished: outstanding to the end (queueing), no span to count
	}
	s.spans = append(s.spans, sp)
}

// add keeps a measured, completed request.
func (s *steadyAcc) add(r *record.Record, out int) {
	o := steadyObs{sent: r.Sent, end: r.Done, sched: r.Sent, ttft: float32(math.NaN()), itl: float32(math.NaN()), e2e: float32(math.NaN()),
		prompt: float32(r.PromptTokens), out: float32(out)}
	if r.Scheduled > 0 && r.Scheduled <= r.Sent {
		o.sched = r.Scheduled
	}
	if n := len(r.Events); n > 0 {
		o.e2e = float32(r.Events[n-1].T - r.Sent)
	}
	if v, ok := ttft(r); ok {
		o.ttft, o.first = float32(v), r.Events[0].T
	}
	if n := len(r.Events); n >= 2 {
		o.itl = float32(float64(r.Events[n-1].T-r.Events[0].T) / float64(n-1))
		o.end = max(o.end, r.Events[n-1].T)
	}
	if r.Dispatched > 0 {
		o.queue = float32(r.Dispatched - r.Scheduled)
	}
	s.obs = append(s.obs, o)
}

// series is one figure's windows, ready to test, with what each window received (its
// covariates: mean prompt and output tokens, and an open loop's realised arrival rate).
type series struct {
	metric, unit string
	xs, ts       []float64    // values and window mid-times (ns)
	spans        [][2]float64 // each window's time span (ns): its first and last send, or its bounds
	covs         [][]float64
	covNames     []string
	// covSign is the sign a covariate's effect must have to explain anything: +1 where
	// more load can only make the figure larger (more prompt tokens per second can only
	// slow TTFT), 0 where either is plausible. A closed loop's send rate follows the
	// server's speed, so a throttled server sends fewer prompts per second as its ITL rises:
	// a negative effect that, unchecked, "explained" every throttling in the matrix.
	covSign []int
	shift   bool // the step test applies (see check)
	// byChanges fits the covariates to the windows' changes, not their levels
	// (stat.AdjustByChanges): an open loop's, whose covariates are the schedule's dice.
	byChanges bool
	// win is, per window, its requests' contention and TTFT: a closed loop's TTFT series
	// only (steadycontention.go).
	win [][]condObs
}

// check runs the steady-state check; users is a closed loop's user count (0: open loop or
// unknown) and open says the run was an open loop.
func (s *steadyAcc) check(users int, open bool, health []record.HealthWindow, capped bool) *Steadiness {
	n := len(s.obs)
	st := &Steadiness{PolicyVersion: SteadyPolicy.Version}
	if n < steadyMinReqs {
		st.Reason = fmt.Sprintf("%d completed requests: at least %d are needed to test for drift", n, steadyMinReqs)
		step(&st.Why, SteadyTooFewRequests, true, "not tested", fig("completed", float64(n)), fig("min_requests", steadyMinReqs))
		return st
	}
	slices.SortFunc(s.obs, func(a, b steadyObs) int { return cmp.Compare(a.sent, b.sent) })
	rg := s.region(open)
	if s.skip != SteadyTransient {
		st.Transient = s.transient()
	}
	if t := st.Transient; t != nil {
		st.Why = append(st.Why, t.Why...)
	}
	var iv []interval
	var why []string
	if s.skip != SteadyClient {
		iv, why = s.disturbed(health, capped)
	}
	if open && s.skip != SteadyQueueing {
		st.Queue = s.queueing(rg)
		st.Queueing = st.Queue != nil
		if st.Queue != nil {
			st.Why = append(st.Why, st.Queue.Why...)
		}
	}
	cands, checks := s.candidates(rg, users, open)
	all := testable(cands, checks)
	covered := 0
	for _, sr := range all {
		_, n := withoutDisturbed(sr, iv, s.disturbShare())
		covered = max(covered, n)
	}
	st.Disturbance = disturbance(iv, why, covered)
	if d := st.Disturbance; d != nil {
		step(&st.Why, SteadyClient, false, "the client was disturbed: a drift only in the windows it covers is not counted", fig("disturbed_s", d.Seconds), fig("spans", float64(d.Intervals)), fig("windows_covered", float64(d.Windows)))
	}
	st.Series = checks
	if len(all) == 0 && st.Transient == nil && !st.Queueing {
		st.Reason = "too few windows: " + untestedReasons(checks)
		step(&st.Why, SteadyWindows, true, "not tested: no series has enough windows", fig("series_tested", 0))
		return st
	}
	st.Tested = true
	if len(all) > 0 {
		st.Alpha = steadyFamilyAlpha / float64(len(all))
	}
	step(&st.Why, SteadyWindows, false, "series tested: "+testedNames(checks), fig("series_tested", float64(len(all))), fig("alpha", st.Alpha))
	in := s.inRegion(rg)
	per := windowSize(in, rg, users, open)
	bounds, _ := countWindows(len(in), per, users)
	e2e := byCount(in, "e2e", "ms", bounds, func(o steadyObs) float32 { return float32(o.end - o.sent) })
	for _, sr := range all {
		if sr.win != nil && s.skip != SteadyContention {
			st.Contention = contention(sr, nil, st.Alpha, s.trimMADs())
		}
	}
	for _, sr := range all {
		st.Windows = max(st.Windows, len(sr.xs))
		d, ok, tf := s.trend(sr, st.Alpha, sr.shift)
		if !ok {
			step(&st.Why, SteadyTrend, false, sr.metric+": no drift", tf...)
			continue
		}
		step(&d.Why, SteadyTrend, true, sr.metric+" "+d.Direction, tf...)
		// The client's disturbance excuses only the windows it covers: the drift is the
		// client's when the series without them is too short to test or moved by less than
		// min_change its way. Leaving those windows out before the trend test cost
		// throttled runs their drifts, and mixes every window, in recorded set http-b; and a
		// trend test over fewer windows fails for want of power, not of a change.
		if cut, n := withoutDisturbed(sr, iv, s.disturbShare()); n > 0 {
			if ch := movedBy(cut.xs, d.Direction); len(cut.xs) < steadyMinWindows || ch < steadyMinChange {
				st.Disturbance.Excused = append(st.Disturbance.Excused, sr.metric+" "+d.Direction)
				st.Why = append(st.Why, d.Why...)
				step(&st.Why, SteadyClient, true, sr.metric+" "+d.Direction+" only in the windows the client was disturbed in: the client's, not counted",
					fig("windows_left_out", float64(n)), fig("windows", float64(len(cut.xs))), fig("change_without", ch), fig("min_change", steadyMinChange))
				continue
			}
		}
		if !open && s.skip != SteadyCycled {
			share := cycledShare
			if s.off("cycled_share") {
				share = 0
			}
			if keep, ch := cycled(d, e2e, share); !keep {
				st.Why = append(st.Why, d.Why...)
				step(&st.Why, SteadyCycled, true, sr.metric+" dropped: E2E did not move with it", fig("e2e_change", ch), fig("needed", share*steadyMinChange))
				continue
			}
		}
		// Judge the server, not the dice: the same test over the series with what each
		// window received taken out (stat.Adjust). A drift that the windows' arrivals or
		// lengths explain is the workload's, not the server's, and is named as such.
		// A drift is explained only when the covariates account for at least half of the
		// change between the first and last thirds, and the series without their part no
		// longer drifts: a regression over a dozen windows always explains something, and
		// re-testing the residuals alone let a covariate that barely moved "explain" a
		// throttled server's ITL rise by half in the virtual-time matrix.
		if adj := adjustSigned(sr); s.skip != SteadyWorkload && len(adj.Used) > 0 && (explains(sr.xs, adj) || s.off("explain_share")) {
			ar := sr
			ar.xs = adj.Xs
			phase := explainedBy(sr, adj) == phaseCovariate
			if _, still, af := s.trend(ar, st.Alpha, sr.shift); !still && (!phase || flatAtEqual(st.Contention)) {
				markExplained(st.Series, sr, d, adj)
				if phase {
					st.Contention.Explained = append(st.Contention.Explained, d)
				}
				st.Why = append(st.Why, d.Why...)
				step(&st.Why, SteadyWorkload, true, sr.metric+" explained by "+explainedBy(sr, adj), append([]Figure{fig("share_of_change", explainedShare(sr.xs, adj))}, af...)...)
				continue
			}
		}
		// Judge the server, not the phase: a closed loop's TTFT at equal contention
		// (steadycontention.go).
		if s.skip != SteadyContention {
			if c := contention(sr, &d, st.Alpha, s.trimMADs()); c != nil && len(c.Explained) > 0 {
				st.Contention = c
				markContention(st.Series, d, c)
				st.Why = append(st.Why, d.Why...)
				step(&st.Why, SteadyContention, true, "ttft explained by the users' phase", fig("ttft_change_at_equal", *c.TTFTAtEqual), fig("level_from", c.From), fig("level_to", c.To))
				continue
			}
		}
		if sr.metric == "client_queue" && s.skip != SteadyClientQueue {
			// the sends' lateness is the client's health, not the server's: named, not counted
			st.ClientDrift = &d
			st.Why = append(st.Why, d.Why...)
			step(&st.Why, SteadyClientQueue, true, "client queue "+d.Direction+": the client's, not counted", fig("change", d.Change), fig("p", d.P))
			continue
		}
		st.Drifts = append(st.Drifts, d)
		st.Why = append(st.Why, d.Why...)
	}
	st.Steady = len(st.Drifts) == 0 && !st.Queueing && st.Transient == nil
	verdict := "steady"
	if !st.Steady {
		verdict = "NOT STEADY"
	}
	step(&st.Why, SteadyVerdict, true, verdict, fig("drifts", float64(len(st.Drifts))), fig("queueing", b2f(st.Queueing)), fig("transient", b2f(st.Transient != nil)))
	return st
}

// The constants the ablation may neutralise (off), as the check reads them.
func (s *steadyAcc) disturbShare() float64 {
	if s.off("disturb_share") {
		return math.SmallestNonzeroFloat64 // a window with any disturbed time is left out
	}
	return disturbShare
}

func (s *steadyAcc) trimMADs() float64 {
	if s.off("trim_mads") {
		return math.Inf(1) // no request trimmed: one fit
	}
	return trimMADs
}

// b2f is 1 for true, 0 for false: a trace's figures are numbers.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// testedNames lists the series tested, by metric.
func testedNames(cs []SeriesCheck) string {
	var out []string
	for _, c := range cs {
		if c.Tested {
			out = append(out, c.Metric)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// candidates builds every series the run has, tested or not, and their checks.
func (s *steadyAcc) candidates(rg region, users int, open bool) ([]series, []SeriesCheck) {
	in := s.inRegion(rg)
	per := windowSize(in, rg, users, open)
	bounds, reason := countWindows(len(in), per, users)
	var out []series
	var reasons []string
	addc := func(sr series, why string) {
		out = append(out, sr)
		reasons = append(reasons, why)
	}
	covs, names := s.requestCovariates(in, bounds, open, rg.e2e50)
	for _, m := range []struct {
		name string
		f    func(steadyObs) float32
	}{{"ttft", func(o steadyObs) float32 { return o.ttft }}, {"itl", func(o steadyObs) float32 { return o.itl }}, {"client_queue", func(o steadyObs) float32 { return o.queue }}} {
		if m.name == "client_queue" && !open {
			continue
		}
		sr := byCount(in, m.name, "ms", bounds, m.f)
		sr.shift, sr.byChanges = true, open
		if len(sr.xs) == len(bounds)-1 && m.name != "client_queue" {
			sr.covs, sr.covNames, sr.covSign = covs, names, plusOne(len(covs))
		}
		if m.name == "ttft" && !open {
			sr.win = s.contentionWindows(in, bounds)
		}
		addc(sr, reason)
	}
	tp, inf, treason := s.byTime(rg, open)
	// An open loop's throughput and requests in flight follow its Poisson arrivals, and
	// E2E-long windows share requests with their neighbours: the series are smooth, its
	// successive differences understate its noise, and the step test flagged an arrival-count
	// excursion of a steady run (docs/steady-evidence.md "Why each rule is there"). There the
	// trend test alone judges them.
	tp.shift, inf.shift = !open, !open
	tp.byChanges = open
	addc(tp, treason)
	if open {
		addc(inf, treason)
	}
	checks := make([]SeriesCheck, len(out))
	for i, sr := range out {
		checks[i] = SeriesCheck{Metric: sr.metric, Windows: len(sr.xs), Reason: reasons[i]}
	}
	return out, checks
}

// testable picks the series that can reject at their α and marks the checks. α is the
// family α over the number of series tested (Bonferroni), each of a series' two tests at
// α/2; a series whose least attainable p (the exact Mann–Kendall 2/n!, or the step test
// from 6 windows) is not below that cannot reject anything and is "not tested", which in
// turn raises the others' α, so the selection is repeated until it holds.
func testable(cands []series, checks []SeriesCheck) []series {
	ok := make([]bool, len(cands))
	for i, c := range checks {
		ok[i] = c.Reason == "" && len(cands[i].xs) >= steadyMinWindows
	}
	for {
		k := 0
		for _, v := range ok {
			if v {
				k++
			}
		}
		if k == 0 {
			break
		}
		alpha := steadyFamilyAlpha / float64(k)
		changed := false
		for i, sr := range cands {
			if ok[i] && !canReject(len(sr.xs), sr.shift, alpha) {
				ok[i], changed = false, true
				checks[i].Reason = fmt.Sprintf("cannot reject: %d windows give p ≥ %.2g at best, above α/2 = %.2g", len(sr.xs), stat.MannKendallMinP(len(sr.xs)), alpha/2)
			}
		}
		if !changed {
			break
		}
	}
	var all []series
	for i, c := range checks {
		if ok[i] {
			all = append(all, cands[i])
		} else if c.Reason == "" {
			checks[i].Reason = fmt.Sprintf("too few windows (%d, at least %d)", len(cands[i].xs), steadyMinWindows)
		}
		checks[i].Tested = ok[i]
	}
	return all
}

// canReject says whether a series of n windows can give p < α/2 by one of its tests.
func canReject(n int, shift bool, alpha float64) bool {
	return stat.MannKendallMinP(n) < alpha/2 || (shift && n >= 6)
}

// windowSize is the requests per count window (see the comment at the top).
func windowSize(in []steadyObs, rg region, users int, open bool) int {
	per := max(steadyMinPerWin, users, (len(in)+steadyMaxWindows-1)/steadyMaxWindows)
	if open && len(in) > 1 && rg.ramp > 0 {
		// an open loop's window holds the arrivals of one E2E at least (see region)
		if span := float64(in[len(in)-1].sent - in[0].sent); span > 0 {
			per = max(per, int(math.Ceil(float64(len(in))/span*rg.ramp)))
		}
	}
	return per
}

func untestedReasons(cs []SeriesCheck) string {
	out := ""
	for i, c := range cs {
		if i > 0 {
			out += "; "
		}
		out += c.Metric + ": " + strings.TrimPrefix(c.Reason, "too few windows: ")
	}
	return out
}

// countWindows cuts n requests in send order into windows of per requests (the last takes
// the remainder); reason is set when a closed loop has too few requests per user for
// steadyMinWindows windows of a generation each.
func countWindows(n, per, users int) ([]int, string) {
	k := n / per
	if n < steadyMinReqs {
		return nil, fmt.Sprintf("too few windows: %d measured requests between the ramp-in and the drain, at least %d are needed", n, steadyMinReqs)
	}
	if k < steadyMinWindows && users > 0 && per == users {
		return nil, fmt.Sprintf("too few windows: %d requests from %d users between the ramp-in and the drain is %d per user, and each window needs one per user; at least %d per user are needed",
			n, users, n/users, steadyMinWindows)
	}
	var b []int
	for i := 0; i <= k; i++ {
		b = append(b, min(n, i*n/max(k, 1)))
	}
	return b, ""
}

// inRegion are the measured requests from the region's first (after the ramp-in, see
// region) to more than one window's least length (rg.minW) before the last send of any
// phase: the last requests run on as nothing more is sent, on an emptier server. A closed
// loop's minW is its E2E's 90th percentile, not the median: with a length mix the long
// requests sent within a median E2E of the end still decode for seconds as the users stop,
// on an emptier server (docs/steady-evidence.md "Why each rule is there").
// (Leaving out every request that finished after the last send was tried first: above
// capacity that is nearly all of them, and an overload went untested; and it selects by
// outcome, the long requests of a window, where a cut by send time does not.) The requests before it are judged by the initial
// transient check (transient), which reads every measured request: a check that left them
// out altogether passed a run whose first measured requests were cold and set its p99s.
func (s *steadyAcc) inRegion(rg region) []steadyObs {
	var in []steadyObs
	for _, o := range s.obs {
		if float64(o.sent) >= rg.first && float64(o.sent) <= rg.lastAll-rg.minW {
			in = append(in, o)
		}
	}
	return in
}

// byCount is the series of a per-request figure's window medians, windows by count.
func byCount(obs []steadyObs, metric, unit string, bounds []int, f func(steadyObs) float32) series {
	sr := series{metric: metric, unit: unit}
	var vals []float64
	for i := 0; i+1 < len(bounds); i++ {
		vals = vals[:0]
		w := obs[bounds[i]:bounds[i+1]]
		for _, o := range w {
			if v := float64(f(o)); !math.IsNaN(v) {
				vals = append(vals, v/1e6)
			}
		}
		if len(vals) == 0 {
			continue
		}
		sr.xs = append(sr.xs, stat.Median(vals))
		sr.ts = append(sr.ts, float64(w[0].sent+w[len(w)-1].sent)/2)
		sr.spans = append(sr.spans, [2]float64{float64(w[0].sent), float64(w[len(w)-1].sent)})
	}
	return sr
}

// region is the part of the run the check tests: from the later of the first measured send
// and the run's first send (warmup included) plus the ramp-in, to the last measured send;
// lastAll is the last send of any phase, after which the server drains.
type region struct {
	first               float64 // the first measured send: the per-request series start here
	start, end, lastAll float64
	ramp, minW          float64 // ns
	e2e50               float64 // the median E2E of the measured requests, ns
}

// region finds the ramp-in and the time windows' least length (see the comment at the top).
func (s *steadyAcc) region(open bool) region {
	e2e := make([]float64, 0, len(s.obs))
	firstM, lastM := int64(math.MaxInt64), int64(0)
	for _, o := range s.obs { // s.obs is in send order
		e2e = append(e2e, float64(o.end-o.sent))
		firstM, lastM = min(firstM, o.sent), max(lastM, o.sent)
	}
	firstAll, lastAll := firstM, lastM
	for _, sp := range s.spans {
		firstAll, lastAll = min(firstAll, sp.sent), max(lastAll, sp.sent)
	}
	// The ramp-in lasts about one E2E: an open loop's in flight climbs to λ·E2E over it, a
	// closed loop's first requests finish at its end. Every window lasts at least one E2E (a
	// closed loop's median E2E, its period: users send in cohorts; an open loop's ramp):
	// figures of requests whose lifetimes overlap are one observation, not several, and
	// shorter windows turn one slow excursion of the batch into a significant "trend".
	e2e50 := stat.Median(e2e)
	ramp := e2e50
	// A closed loop's time windows last at least its E2E's 90th percentile: with a length
	// mix the long requests' E2E is several times the median, and windows of the median
	// E2E let the share of long requests in flight swing throughput on a steady server.
	minW := max(ramp, quantile90(e2e))
	if open {
		ramp = stat.Median(e2e[:min(len(e2e), max(steadyMinPerWin, len(e2e)/steadyMaxWindows))])
		minW = ramp
	}
	// The per-request trend series start after the ramp-in, and the initial transient is
	// judged from the first measured request (transient), so that the verdict covers every
	// request the figures do. Starting the trend series at the first measured request was
	// tried: an open loop's in flight climbs from nothing to λ·E2E over its ramp-in (near
	// capacity the queue takes longer still to settle), and its first windows' TTFT rose on
	// a steady server; a closed loop's first measured cohort is sent together as the
	// warmup's finish, and its TTFT above the rest's read as a fall. Neither is a cold
	// server, and neither moves a p99 much; a cold start is twice as slow or more and is
	// named by the transient check (figures: docs/steady-evidence.md).
	//
	// A closed loop's measured phase starts on a drained server (load/drain.go): when nothing
	// sent before the first measured request was still in flight at its send, the users ramp
	// up again from one over a request time, and the ramp-in is counted from there. Counted
	// from the warmup's first send, it lay seconds in the past and the first time window
	// held the ramp, which read as a throughput rise on a steady server (figures:
	// docs/steady-evidence.md).
	from := firstAll
	if !open && s.idleAt(firstM) { // an open loop is not held: idle there is chance
		from = firstM
	}
	first := max(float64(firstM), float64(from)+ramp)
	return region{first: first, start: first, end: float64(lastM), lastAll: float64(lastAll), ramp: ramp, minW: minW, e2e50: e2e50}
}

// idleAt reports whether no request sent before t was still in flight at t.
func (s *steadyAcc) idleAt(t int64) bool {
	for _, sp := range s.spans {
		if sp.sent < t && (sp.end < 0 || sp.end > t) {
			return false
		}
	}
	return true
}

// byTime is output tokens/s and mean requests in flight over equal-time windows of the
// region that leaves out the ramp-in and the drain (see the comment at the top).
func (s *steadyAcc) byTime(rg region, open bool) (tp, inf series, reason string) {
	tp, inf = series{metric: "output_throughput", unit: "tok/s"}, series{metric: "in_flight", unit: "requests"}
	start, ramp, minW := rg.start, rg.ramp, rg.minW
	span := rg.end - start
	k := steadyMaxWindows
	if minW > 0 {
		k = min(k, int(span/minW))
	}
	if span <= 0 {
		k = 0
	}
	if k < steadyMinWindows {
		return tp, inf, fmt.Sprintf("too few windows: the sending span after the ramp-in of %.3g s (%.3g s) holds %d windows of at least %.3g s, at least %d are needed",
			ramp/1e9, max(span, 0)/1e9, max(k, 0), minW/1e9, steadyMinWindows)
	}
	w := span / float64(k)
	tokens, busy := make([]float64, k), make([]float64, k)
	sent, out, prompt, prefill := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	for _, sp := range s.spans {
		if sp.end < 0 {
			continue
		}
		spread(tokens, start, w, float64(sp.first), float64(sp.end), float64(sp.tokens), sp.first > 0)
		spread(busy, start, w, float64(sp.sent), float64(sp.end), float64(sp.end-sp.sent), true)
		if i := int((float64(sp.sent) - start) / w); float64(sp.sent) >= start && i < k {
			sent[i]++
			prefill[i] += float64(sp.prompt) / (w / 1e9)
		}
	}
	// what each window received: the mean lengths of the requests in flight in it, and an
	// open loop's arrivals (a closed loop's sends follow its completions: not the client's
	// dice)
	for i := range k {
		out[i], prompt[i] = s.inFlightMix(start+float64(i)*w, start+float64(i+1)*w)
	}
	// A closed loop's sends follow its completions: its send rate is the throughput itself,
	// so only what is in flight (and an open loop's arrivals) may explain throughput.
	tp.covs, tp.covNames, tp.covSign = [][]float64{out, prompt}, []string{"the output lengths in flight", "the prompt lengths in flight"}, []int{1, 0}
	if !open { // the users' phase (steadycontention.go), last: a mix's lengths come first
		tp.covs, tp.covNames, tp.covSign = append(tp.covs, s.phaseByTime(start, w, k)), append(tp.covNames, phaseCovariate), append(tp.covSign, 0)
	}
	if open {
		tp.covs, tp.covNames, tp.covSign = append([][]float64{sent, prefill}, tp.covs...), append([]string{"the arrivals the windows drew", "the prompt tokens sent per second"}, tp.covNames...), append([]int{1, 0}, tp.covSign...)
	}
	for i := range k {
		mid := start + (float64(i)+0.5)*w
		tp.xs, tp.ts = append(tp.xs, tokens[i]/(w/1e9)), append(tp.ts, mid)
		inf.xs, inf.ts = append(inf.xs, busy[i]/w), append(inf.ts, mid)
		tp.spans = append(tp.spans, [2]float64{mid - w/2, mid + w/2})
		inf.spans = append(inf.spans, [2]float64{mid - w/2, mid + w/2})
	}
	return tp, inf, ""
}

// spread adds amount, spread evenly over [a, b], to the windows of length w from start.
func spread(dst []float64, start, w, a, b, amount float64, ok bool) {
	if !ok || amount <= 0 {
		return
	}
	end := start + w*float64(len(dst))
	if b <= a { // one instant
		if a >= start && a < end {
			dst[int((a-start)/w)] += amount
		}
		return
	}
	lo, hi := max(a, start), min(b, end)
	if hi <= lo {
		return
	}
	first, last := int((lo-start)/w), min(len(dst)-1, int((hi-start)/w))
	for i := max(first, 0); i <= last; i++ { // by index: stepping by time can stall on rounding
		ov := min(hi, start+float64(i+1)*w) - max(lo, start+float64(i)*w)
		if ov > 0 {
			dst[i] += amount * ov / (b - a)
		}
	}
}

// trend tests one series at level alpha and returns its drift when significant and large;
// shift adds the step test (see check for where it is left out).
func trend(sr series, alpha float64, shift bool) (Drift, bool) {
	d, ok, _ := trendFigs(sr, alpha, shift, true)
	return d, ok
}

// trend is trend with the trace's figures, under the ablation's skip.
func (s *steadyAcc) trend(sr series, alpha float64, shift bool) (Drift, bool, []Figure) {
	return trendFigs(sr, alpha, shift, !s.off("shift_min_separation"))
}

// trendFigs is trend with the figures it read; gate applies the step's rank separation.
func trendFigs(sr series, alpha float64, shift, gate bool) (Drift, bool, []Figure) {
	xs, ts := sr.xs, sr.ts
	n := len(xs)
	// Two tests, each at α/2 (Bonferroni): Mann–Kendall for a gradual trend, ShiftTest for a
	// step (throttling, a throughput step), which a trend test counts only by the pairs that
	// straddle it.
	mk, sh := stat.MannKendall(xs), stat.Shift{P: 1}
	if shift {
		sh = stat.ShiftTest(xs)
	}
	// A step must also separate its two sides in rank order (stat.Shift's Separation): the
	// step test's noise is read from successive differences and the residuals' spread, and
	// an excursion of a few windows that came back fools both (an example in
	// docs/steady-evidence.md). The rule can only remove rejections, so the false-alarm rate
	// stays within α.
	pStep := sh.P
	if gate && sh.Separation > shiftMinSeparation {
		sh.P = 1
	}
	p := min(1, 2*min(mk.P, sh.P))
	up := mk.S > 0
	if sh.P < mk.P {
		up = sh.D > 0
	}
	// The size is the change between the medians of the first and last thirds of the windows.
	// Sen's slope over the whole series was tried first: for a step — throttling that begins
	// part-way — most pairs lie within one side of the step, their slopes are about zero,
	// and a large slow-down a third into a run came out as no change and went unflagged.
	first, last, change := thirds(xs)
	delta := last - first
	figs := []Figure{fig("windows", float64(n)), fig("p_mk", mk.P), fig("p_step", pStep), fig("separation", sh.Separation), fig("p", p), fig("alpha", alpha),
		fig("first_third", first), fig("last_third", last), fig("median", stat.Median(xs)), fig("change", change)}
	if p >= alpha || change < steadyMinChange || delta == 0 || (delta > 0) != up {
		return Drift{}, false, figs
	}
	dir := "rose"
	if delta < 0 {
		dir = "fell"
	}
	// per minute: the change over the time between the thirds' middles
	third := max(1, n/3)
	dt := (ts[n-1-third/2] + ts[n-1-(third-1)/2] - ts[third/2] - ts[(third-1)/2]) / 2
	per := 0.0
	if dt > 0 {
		per = delta / dt * 60e9
	}
	return Drift{Metric: sr.metric, Direction: dir, PerMinute: per, Unit: sr.unit, Change: change, P: p}, true, figs
}

// thirds returns the medians of the first and last thirds of xs (at least one value each)
// and the change between them over the median of xs (stat.RelChange): the size of a drift,
// as trend, cycled and movedBy measure it. xs is not empty.
func thirds(xs []float64) (first, last, change float64) {
	third := max(1, len(xs)/3)
	first, last = stat.Median(xs[:third]), stat.Median(xs[len(xs)-third:])
	return first, last, stat.RelChange(first, last, stat.Median(xs))
}

// cycled reports whether a closed loop's TTFT or ITL drift shows in how fast its users
// cycle: E2E moved the same way by at least share (cycledShare) of the size gate. Users that started in step
// drift apart over the first generations, after which their prefills interleave with the
// others' decodes: ITL rises and TTFT falls by tens of per cent while E2E and throughput stay
// flat (figures: docs/steady-evidence.md).
// That is the loop's phase structure mixing, not the server; a cold start, throttling or a
// step moves E2E with them. Other metrics pass unchanged.
func cycled(d Drift, e2e series, share float64) (bool, float64) {
	if d.Metric != "ttft" && d.Metric != "itl" {
		return true, 0
	}
	n := len(e2e.xs)
	if n < steadyMinWindows {
		return true, 0 // nothing to corroborate with: keep the drift
	}
	first, last, ch := thirds(e2e.xs)
	return ch >= share*steadyMinChange && (last > first) == (d.Direction == "rose"), ch
}

// stillRising reports whether the last half of xs still rose by steadyMinChange of its
// median (Sen's slope across it): a queue above capacity grows to the end, a one-off
// slow-down levels off.
func stillRising(xs []float64) bool {
	return lastHalfRise(xs) >= steadyMinChange
}

// lastHalfRise is the rise over the last half of xs (Sen's slope across it) over its median;
// 0 when it did not rise.
func lastHalfRise(xs []float64) float64 {
	h := xs[len(xs)/2:]
	rise := stat.SenSlope(h) * float64(len(h)-1)
	if rise <= 0 {
		return 0
	}
	return stat.RelChange(0, rise, stat.Median(h))
}

// steadyWarning names what drifted, queued or started cold, or nothing for a steady (or
// untested) run.
func steadyWarning(st *Steadiness) []string {
	if st == nil {
		return nil
	}
	var out []string
	if st.Disturbance != nil {
		out = append(out, disturbanceWarning(st.Disturbance))
	}
	if d := st.ClientDrift; d != nil && !st.Queueing {
		out = append(out, fmt.Sprintf("the client's own queue time (how late its sends went out) %s by %.0f%% over the window (p = %.2g): the load generator's health changed, not the server; the steady verdict does not count it, and a rise delays every request's start",
			d.Direction, 100*d.Change, d.P))
	}
	if !st.Tested || st.Steady {
		return out
	}
	if st.Queue != nil {
		out = append(out, queueWarning(st.Queue))
	}
	if st.Transient != nil {
		out = append(out, transientWarning(st.Transient))
	}
	client := st.ClientDrift != nil && st.ClientDrift.Direction == "rose"
	for _, d := range st.Drifts {
		if st.Queueing && (d.Metric == "in_flight" || d.Metric == "client_queue") {
			continue
		}
		cause := "the server changed during the measurement (warmup too short, throttling, a growing queue)"
		if client && d.Metric != "client_queue" {
			cause = "the client's own queue time rose too, so the load generator may be the cause rather than the server"
		}
		out = append(out, fmt.Sprintf("not steady: %s %s by %.3g %s per minute (%.0f%% over the window; p = %.2g over %d windows by the trend and step tests, α %.2g; not explained by the arrivals or lengths the windows drew%s): %s; see docs/metrics.md \"Steady state\"",
			driftName(d.Metric), d.Direction, math.Abs(d.PerMinute), d.Unit, 100*d.Change, d.P, st.Windows, st.Alpha, atEqualNote(st.Contention, d), cause))
	}
	return out
}

func driftName(m string) string {
	switch m {
	case "ttft":
		return "TTFT p50"
	case "itl":
		return "ITL p50"
	case "output_throughput":
		return "output throughput"
	case "in_flight":
		return "requests in flight"
	}
	return "client queue time p50"
}

// quantile90 is the 90th percentile of xs (type 7), leaving xs as it was.
func quantile90(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return Quantile(s, 90)
}
