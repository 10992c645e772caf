package metrics

import (
	"fmt"

	"servebench/policy"
)

// The steady-state check's policy as a value: its rules in the order the check applies them,
// each with the condition it tests, the figures it reads, its effect and its named constants.
// Every rule site in steady*.go records a Step under its rule's ID (Steadiness.Why, and the
// Why of each finding), so a verdict can be redone by hand from its trace and the table in
// docs/steady-policy.md, which is generated from SteadyPolicy. A change to a rule or a
// constant bumps Version.

// The policy's types are package policy's, shared with compare.
type (
	// Policy is an ordered list of rules.
	Policy = policy.Policy
	// Rule is one step of a policy (the steady check's rules have no Scope).
	Rule = policy.Rule
	// Constant is one named value of a rule.
	Constant = policy.Constant
	// Step is one rule that fired, with the figures it read; Changed: the step set (or
	// cleared) a finding that counts against the verdict.
	Step = policy.Step
	// Figure is one figure a step read, by name.
	Figure = policy.Figure
)

// The steady check's rules, in policy order.
const (
	SteadyTooFewRequests = "too-few-requests"
	SteadyTransient      = "initial-transient"
	SteadyQueueing       = "unbounded-queueing"
	SteadyWindows        = "windows"
	SteadyTrend          = "trend"
	SteadyClient         = "client-disturbed"
	SteadyCycled         = "closed-loop-cycled"
	SteadyWorkload       = "workload-explains"
	SteadyContention     = "contention-explains"
	SteadyClientQueue    = "client-queue-drift"
	SteadyVerdict        = "verdict"
)

// The steady check's constants. The code reads these names; SteadyPolicy lists them under
// the rule that uses them, so the table in docs/steady-policy.md is the code's. The figures
// that set them are in docs/steady-evidence.md and docs/metrics.md "Steady state".
const (
	steadyMinReqs = 40 // fewer completed requests: too few to cut into windows

	transientAlpha    = 0.001 // one-sided level of the slow start's test
	transientMinRatio = 2.0   // the first requests' median over the rest's, at least
	// transientMargin: the first requests' median over that of the slowest later run of as
	// many consecutive requests, at least (see transient).
	transientMargin = 1.5

	disturbSched = 10e6 // Go scheduling latency p99 in a health window, ns
	disturbSteal = 0.10 // share of the machine's CPU time stolen
	// disturbLate: the client is late when its sampler's timer fires this late, or (uncapped
	// loads) the p90 of its sends' lateness in a 1 s bucket is this late, ns: one threshold for
	// the client's lateness, whichever clock shows it.
	disturbLate = 50e6
	// disturbShare: a window is disturbed when disturbed time covers this share of it
	disturbShare = 0.25

	queueWindows = 10 // equal-time windows of the outstanding series

	// steadyMinPerWin is the fewest requests the check reads one figure from: a count window
	// (its median), a batch of the initial-transient rule's MSER (its mean: MSER-5) and of its
	// slow start (its median).
	steadyMinPerWin   = 5
	steadyMaxWindows  = 20
	steadyMinWindows  = 5 // a series of fewer windows is not tested
	steadyFamilyAlpha = 0.01

	// shiftMinSeparation is the largest exact rank-sum p at which a step's two sides count as
	// separated (see trend): at 3 windows a side that is every value of one side beyond
	// every value of the other.
	shiftMinSeparation = 0.05
	steadyMinChange    = 0.10

	cycledShare = 0.5 // of steadyMinChange: how far E2E must move with a TTFT or ITL drift

	explainShare = 0.5 // of the change: the covariates' part that explains a drift

	// trimMADs is how far from the median, in robust standard deviations, a request's
	// residual may lie and still take part in withinFit's second fit.
	trimMADs = 3
)

// SteadyPolicy is the policy the steady-state check applies (steady.go).
var SteadyPolicy = Policy{
	Version: "steady-2026.12.4",
	Rules: []Rule{
		{ID: SteadyTooFewRequests,
			Condition: "fewer than min_requests measured requests completed",
			Reads:     []string{"completed"},
			Effect:    "not tested: too few requests to cut into windows",
			Constants: []Constant{{Name: "min_requests", Value: steadyMinReqs, Unit: "requests"}}},
		{ID: SteadyTransient,
			Condition: "MSER over every measured request's TTFT in send order (prompt lengths regressed out), in batches of min_per_window, settles after a slow start of N requests (under half of them: MSER's own bound); the first N's median, and that of each whole batch of min_per_window of them, is at least transient_min_ratio × the rest's, slower by a one-sided exact test that their median is above the rest (a strict majority of them above; a rank-sum test when N < min_per_window) at p < transient_alpha/2, and at least transient_margin × the median of the slowest later run of N consecutive requests",
			Reads:     []string{"requests (N)", "ratio", "p", "lowest batch ratio", "slowest later block ratio"},
			Effect:    "not steady: initial transient",
			Constants: []Constant{{Name: "transient_min_ratio", Value: transientMinRatio, Unit: "× the rest's median"}, {Name: "transient_alpha", Value: transientAlpha, Unit: "one-sided"}, {Name: "transient_margin", Value: transientMargin, Unit: "× the slowest later block"}}},
		{ID: SteadyQueueing,
			Condition: "an open loop whose mean requests outstanding over queue_windows equal-time windows (from the ramp-in to the last send) rose by the exact Mann–Kendall test at p < family_alpha (one test), and still rose over the last half by min_change of its median",
			Reads:     []string{"from", "to", "p", "last half's rise"},
			Effect:    "not steady: unbounded queueing",
			Constants: []Constant{{Name: "queue_windows", Value: queueWindows, Unit: "windows"}}},
		{ID: SteadyWindows,
			Condition: "always: TTFT and ITL (and an open loop's client queue) are window medians of at least max(min_per_window, users, requests/max_windows) requests (an open loop's: the arrivals of one E2E); throughput and in flight are equal-time windows of at least one E2E (a closed loop's p90); a series is tested when it has min_windows windows and can reach p < α/2, α = family_alpha / series tested",
			Reads:     []string{"windows per series", "series tested", "α"},
			Effect:    "the series tested and α; when none is, no transient and no queueing: not tested (too few windows)",
			Constants: []Constant{{Name: "min_per_window", Value: steadyMinPerWin, Unit: "requests: the fewest one figure is read from (a window, an MSER batch)"}, {Name: "max_windows", Value: steadyMaxWindows, Unit: "windows"}, {Name: "min_windows", Value: steadyMinWindows, Unit: "windows"}, {Name: "family_alpha", Value: steadyFamilyAlpha, Unit: "Bonferroni over the series"}}},
		{ID: SteadyTrend,
			Condition: "a tested series: p = min(1, 2·min(p_mk, p_step)) < α, p_mk the Mann–Kendall p widened for serial correlation, p_step the step test's (left at 1 when its sides' rank-sum separation exceeds shift_min_separation, and for an open loop's throughput and in flight); and the change between the medians of the first and last thirds, over the series' median, is at least min_change, in the tests' direction",
			Reads:     []string{"windows", "p_mk", "p_step", "separation", "p", "α", "first third", "last third", "median", "change"},
			Effect:    "a drift of the series, judged by the rules below",
			Constants: []Constant{{Name: "shift_min_separation", Value: shiftMinSeparation, Unit: "rank-sum p"}, {Name: "min_change", Value: steadyMinChange, Unit: "of the median"}}},
		{ID: SteadyClient,
			Condition: "a drift, and the client's own health windows show scheduling latency p99 ≥ disturb_sched_ms, its timer late ≥ disturb_late_ms or CPU steal ≥ disturb_steal, or (no concurrency cap) a 1 s bucket's send lateness p90 ≥ disturb_late_ms",
			Reads:     []string{"disturbed seconds", "spans", "windows covered", "change without them"},
			Effect:    "a drift is the client's when the series without the windows covered by disturb_share or more has fewer than min_windows windows, or its first and last thirds moved by less than min_change its way: named in a warning, not counted",
			Constants: []Constant{{Name: "disturb_sched_ms", Value: disturbSched / 1e6, Unit: "ms"}, {Name: "disturb_steal", Value: disturbSteal, Unit: "share of CPU"}, {Name: "disturb_late_ms", Value: disturbLate / 1e6, Unit: "ms late: the sampler's timer, or the sends' p90"}, {Name: "disturb_share", Value: disturbShare, Unit: "of a window"}}},
		{ID: SteadyCycled,
			Condition: "a closed loop's TTFT or ITL drift while E2E's first and last thirds moved by less than cycled_share × min_change, or the other way",
			Reads:     []string{"E2E change"},
			Effect:    "the drift is dropped: the loop's phase mixing, not the server",
			Constants: []Constant{{Name: "cycled_share", Value: cycledShare, Unit: "× min_change"}}},
		{ID: SteadyWorkload,
			Condition: "a drift of which the covariates (arrivals, prompt and output lengths; a closed loop's phase) account for at least explain_share of the thirds' change in its direction, fitted over as many of them as leave the residuals min_windows degrees of freedom, and the series without their part no longer drifts by the trend rule (the phase only when TTFT is flat at equal contention)",
			Reads:     []string{"covariates' share of the change", "p without them"},
			Effect:    "explained: named on the series, not counted",
			Constants: []Constant{{Name: "explain_share", Value: explainShare, Unit: "of the change"}}},
		{ID: SteadyContention,
			Condition: "a closed loop's TTFT drift of which the prefill and decode work in each TTFT interval (within-window least squares, residuals beyond trim_mads robust SDs refitted out) accounts for at least explain_share, while TTFT at equal work moved by less than min_change and does not drift by the trend rule",
			Reads:     []string{"work's part of the change", "TTFT change at equal contention"},
			Effect:    "explained by the users' phase: named in a note, not counted",
			Constants: []Constant{{Name: "trim_mads", Value: trimMADs, Unit: "robust SDs"}}},
		{ID: SteadyClientQueue,
			Condition: "an open loop's client queue time drifts",
			Reads:     []string{"change", "p"},
			Effect:    "the load generator's health: named in a warning, not counted"},
		{ID: SteadyVerdict,
			Condition: "always, once tested",
			Reads:     []string{"drifts counted", "queueing", "transient"},
			Effect:    "steady when no drift is counted, no unbounded queueing and no initial transient; else NOT STEADY"},
	},
}

// fig is a named figure of a step.
func fig(name string, v float64) Figure { return Figure{Name: name, Value: v} }

// step appends a step to a trace.
func step(why *[]Step, rule string, changed bool, effect string, figs ...Figure) {
	*why = append(*why, Step{Rule: rule, Effect: effect, Changed: changed, Figures: figs})
}

// ExplainSteady writes a trace, one step a line, each rule with its position in the
// policy, its effect and its figures: the text of run and report --explain.
func ExplainSteady(why []Step) []string {
	var out []string
	for _, s := range why {
		mark := " "
		if s.Changed {
			mark = "→"
		}
		line := fmt.Sprintf("%s %d %s: %s", mark, SteadyPolicy.Index(s.Rule)+1, s.Rule, s.Effect)
		for i, f := range s.Figures {
			sep := ", "
			if i == 0 {
				sep = " ("
			}
			line += fmt.Sprintf("%s%s %.4g", sep, f.Name, f.Value)
			if i == len(s.Figures)-1 {
				line += ")"
			}
		}
		out = append(out, line)
	}
	return out
}
