package compare

import (
	"fmt"
	"slices"

	"servebench/policy"
	"servebench/stat"
)

// The verdict policy as a value: compare's rules in the order they apply, each with the
// condition it tests, the figures it reads, its effect and its named constants. Every rule
// site in this package records a Step under its rule's ID (Row.Why, Result.Why), so a verdict
// can be reproduced by hand from its trace and DefaultPolicy's table (docs/compare-policy.md,
// generated from this value). A change to a rule or a constant bumps Version.

// Policy is an ordered list of rules: policy.Policy, with the methods that evaluate it here.
type Policy policy.Policy

// The policy's parts, the shared types of package policy.
type (
	// Rule is one step of the policy; its Scope is "runs" (before any metric), "row" (one
	// metric) or "verdict" (the whole comparison).
	Rule = policy.Rule
	// Constant is one named value of a rule.
	Constant = policy.Constant
	// Step is one rule that fired on a row or on the verdict, with the figures it read. Where
	// it set the row's change (or the verdict), Changed is true and Effect is exactly the
	// change it set ("regressed", "inconclusive", …).
	Step = policy.Step
	// Figure is one figure a step read, by name.
	Figure = policy.Figure
)

// The rules' IDs, in policy order.
const (
	RuleDisturbedRuns    = "disturbed-runs-left-out"
	RuleBrieflyDisturbed = "briefly-disturbed-kept"
	RulePrefixCache      = "prefix-cache-condition"
	RuleUndefined        = "metric-undefined"
	RuleTailThreshold    = "tail-threshold"
	RuleArithmetic       = "arithmetic-means"
	RuleInterval         = "interval"
	RuleTailOneRun       = "tail-one-run"
	RuleContention       = "contention-explains"
	RuleDisturbedTail    = "disturbed-tail-by-side"
	RuleContentionClears = "contention-clears"
	RuleTailNotMoved     = "tail-not-moved"
	RuleHolds            = "inconclusive-holds"
	RuleBlocking         = "blocking-condition"
	RuleVerdict          = "verdict-from-rows"
	RuleMeasuredNothing  = "measured-nothing"
	RuleAnswers          = "answers"
	RuleDecide           = "runs-to-decide"
	RuleProvisional      = "provisional"
)

// DefaultPolicy is the policy Compare applies.
var DefaultPolicy = Policy{
	Version: "compare-2026.12.4",
	Rules: []Rule{
		{ID: RuleDisturbedRuns, Scope: "runs",
			Condition: "a run's own client health record (record.Quality) marks its load generator disturbed for at least disturbed_share of its measurement window",
			Reads:     []string{"disturbed seconds", "window seconds"},
			Effect:    "the run is left out of every metric, the most disturbed first, while at least two runs of its side remain (the fewest whose spread can be measured); the others are kept and named as disturbed",
			Constants: []Constant{{Name: "disturbed_share", Value: 0.25, Unit: "of the window"}}},
		{ID: RuleBrieflyDisturbed, Scope: "runs",
			Condition: "a run's client health record marks it disturbed for some seconds, but less than disturbed_share of its window",
			Reads:     []string{"disturbed seconds", "window seconds"},
			Effect:    "the run is kept in every metric and named in a note"},
		{ID: RulePrefixCache, Scope: "runs",
			Condition: "either side's server reported cached prompt tokens",
			Reads:     []string{"cached prompt tokens / prompt tokens, per side"},
			Effect:    "the condition measurement.prefix_cache (none below cache_none, most above cache_most, partial between) joins both sides' conditions, so a change of it is a blocking condition unless expected",
			Constants: []Constant{{Name: "cache_none", Value: 0.05, Unit: "share of prompt tokens"}, {Name: "cache_most", Value: 0.5, Unit: "share of prompt tokens"}}},
		{ID: RuleUndefined, Scope: "runs",
			Condition: "a key metric is undefined in every run of a side",
			Effect:    "the metric is not compared (no row); a note says so"},
		{ID: RuleTailThreshold, Scope: "row",
			Condition: "the metric is a tail percentile (p99)",
			Reads:     []string{"--tail-threshold", "--threshold"},
			Effect:    "the row is judged at the tail threshold (tail_threshold_factor × --threshold when --tail-threshold is 0)",
			Constants: []Constant{{Name: "tail_threshold_factor", Value: 2, Unit: "× threshold (--tail-threshold 0)", Kind: policy.OptionDefault}}},
		{ID: RuleArithmetic, Scope: "row",
			Condition: "a run's value of the metric is 0 (goodput of a run that met no SLO)",
			Reads:     []string{"run values"},
			Effect:    "the sides are arithmetic means of their runs and the delta a difference of means over the base's, with a pooled Student-t interval"},
		{ID: RuleInterval, Scope: "row",
			Condition: "always: the 1 − alpha interval of cand/base − 1 (two-level t on the log scale; one run a side assumes a run-to-run spread of assumed_run_sd) and its 1 − 2·alpha interval (TOST)",
			Reads:     []string{"delta", "delta_lo", "delta_hi", "eq_lo", "eq_hi", "p", "threshold"},
			Effect:    "regressed or improved when the 1 − alpha interval lies wholly beyond the threshold on the worse or better side; \"~\" (not significant) or \"within threshold\" (significant) when the 1 − 2·alpha interval lies inside ±threshold; else inconclusive; with a threshold of 0 (--threshold 0) any significant change is regressed or improved, any other \"~\"",
			Constants: []Constant{{Name: "default_threshold", Value: 0.05, Unit: "relative change (--threshold)", Kind: policy.OptionDefault},
				{Name: "default_alpha", Value: 0.05, Unit: "Options.Alpha", Kind: policy.OptionDefault}, {Name: "assumed_run_sd", Value: stat.AssumedRunSD, Unit: "log scale"},
				{Name: "bootstrap_rounds", Value: 100, Unit: "rounds, one run a side"}}},
		{ID: RuleTailOneRun, Scope: "row",
			Condition: "a tail percentile with one run a side",
			Effect:    "the row is not judged: shown, left out of the verdict"},
		{ID: RuleContention, Scope: "row",
			Condition: "TTFT p50/p99, E2E p50/p99 or a throughput called improved or regressed, with a figure at equal contention (two levels, lone arrivals and requests overlapping one or more others, each kept where it has at least min_stratum requests in every run); at one run a side: that figure does not show the same change; else: it spans both levels and is equivalent, or it shows another change and its interval lies wholly apart from the row's",
			Reads:     []string{"the figure at equal contention: delta, interval, change, levels", "the row's interval"},
			Effect:    "inconclusive: the mix of contention levels, not the server, explains the change",
			Constants: []Constant{{Name: "min_stratum", Value: 10, Unit: "requests a level, every run"}}},
		{ID: RuleDisturbedTail, Scope: "row",
			Condition: "a tail called improved or regressed whose own median did not make the same change, and the side it got worse on (the candidate for a regression, the base for an improvement) has a run left out or kept as disturbed, or one briefly disturbed for more than the tail's share of its window (1% for a p99)",
			Reads:     []string{"the tail's and its median's change", "disturbed runs of that side", "their disturbed seconds and window"},
			Effect:    "inconclusive: the change is not called (a tail that moved still holds the verdict)"},
		{ID: RuleContentionClears, Scope: "row",
			Condition: "an inconclusive row (not a tail that moved significantly) whose figure at equal contention is equivalent and, where the row moved significantly, spans both levels; or whose lone arrivals are equivalent and the row did not move significantly",
			Reads:     []string{"the figure at equal contention's change and levels", "the lone arrivals' change", "significant"},
			Effect:    "the row does not hold the verdict"},
		{ID: RuleTailNotMoved, Scope: "row",
			Condition: "an inconclusive tail whose interval holds no change (not significant at alpha)",
			Reads:     []string{"p", "alpha"},
			Effect:    "the row does not hold the verdict"},
		{ID: RuleHolds, Scope: "row",
			Condition: "an inconclusive row that neither rule before cleared",
			Effect:    "the row holds the verdict at inconclusive (unless a row regressed or improved)"},
		{ID: RuleBlocking, Scope: "verdict",
			Condition: "a condition classed blocking differs and was not named with --expect-change",
			Reads:     []string{"condition differences"},
			Effect:    "not comparable"},
		{ID: RuleVerdict, Scope: "verdict",
			Condition: "always (no blocking condition): in this order, no row; a row regressed; a row improved; a row holds (inconclusive-holds)",
			Reads:     []string{"rows' changes"},
			Effect:    "measured nothing; regressed; improved; inconclusive; else no significant change"},
		{ID: RuleMeasuredNothing, Scope: "verdict",
			Condition: "a side completed no measured request, or no key metric could be compared",
			Reads:     []string{"completed measured requests per side", "rows"},
			Effect:    "measured nothing"},
		{ID: RuleAnswers, Scope: "verdict",
			Condition: "both sides judged answers: accuracy or valid-answer share, the difference's Newcombe interval at 1 − alpha",
			Reads:     []string{"right / judged per side", "the difference's interval"},
			Effect:    "regressed when the interval lies below 0 (unless not comparable or measured nothing); improved when above 0 and the verdict was no significant change"},
		{ID: RuleDecide, Scope: "verdict",
			Condition: "the verdict is inconclusive",
			Reads:     []string{"each inconclusive row's runs to decide", "the largest run-to-run spread of the inconclusive medians and throughputs (two runs a side or more)"},
			Effect:    "names the runs per side that would decide every inconclusive row with power_target power at the deltas seen (none when a row's delta lies on the threshold), and that spread with the runs per side that would show no change within the threshold at it with power_target power, were nothing changed",
			Constants: []Constant{{Name: "power_target", Value: 0.8, Unit: "power"}}},
		{ID: RuleProvisional, Scope: "verdict",
			Condition: "the verdict is not measured nothing or not comparable, and a side has a run that was not steady, judged INVALID by its validity rules, or carries an invalidating warning",
			Reads:     []string{"each run's steady-state check, validity and warnings"},
			Effect:    "the verdict is marked PROVISIONAL with its reasons (exit 9)"},
	},
}

// Index is the rule's position in the policy (0 first), −1 when no rule has the ID.
func (p Policy) Index(id string) int { return policy.Policy(p).Index(id) }

// Constants counts the policy's named constants.
func (p Policy) Constants() int { return policy.Policy(p).Constants() }

// Tuned counts the policy's tuned constants (those that are not an option's default).
func (p Policy) Tuned() int { return policy.Policy(p).Tuned() }

// fig is a named figure of a step.
func fig(name string, v float64) Figure { return Figure{Name: name, Value: v} }

// addStep appends a step to a trace.
func addStep(why *[]Step, rule, effect string, changed bool, figs ...Figure) {
	*why = append(*why, Step{Rule: rule, Effect: effect, Changed: changed, Figures: figs})
}

// stepf is addStep with a formatted, non-changing effect.
func stepf(why *[]Step, rule string, figs []Figure, format string, a ...any) {
	addStep(why, rule, fmt.Sprintf(format, a...), false, figs...)
}

// Has says whether the policy holds the rule.
func (p Policy) Has(id string) bool { return policy.Policy(p).Has(id) }

// Without is the policy less the named rules (and so their constants), in the same order:
// the policy an ablation evaluates. Its Version says which rules it lacks. The rules every
// verdict rests on (Core) stay whatever is named.
func (p Policy) Without(ids ...string) Policy {
	out := Policy{Version: p.Version}
	for _, r := range p.Rules {
		if slices.Contains(ids, r.ID) && !slices.Contains(Core, r.ID) {
			out.Version += " without " + r.ID
			continue
		}
		out.Rules = append(out.Rules, r)
	}
	return out
}

// With is the policy with the named constant set to v, in every rule that lists it: the
// policy a constant's ablation evaluates. Its Version says so. It panics on a name no rule
// lists.
func (p Policy) With(name string, v float64) Policy {
	out := Policy{Version: fmt.Sprintf("%s with %s=%g", p.Version, name, v)}
	found := false
	for _, r := range p.Rules {
		r.Constants = slices.Clone(r.Constants)
		for i := range r.Constants {
			if r.Constants[i].Name == name {
				r.Constants[i].Value, found = v, true
			}
		}
		out.Rules = append(out.Rules, r)
	}
	if !found {
		panic("compare: the policy has no constant " + name)
	}
	return out
}

// Neutral is, for each constant that a value can switch off (every tuned one, and the option
// default tail_threshold_factor), that value: the constant's ablation
// (docs/compare-recorded.md) judges the recorded sets with it. disturbed_share 0:
// any disturbed second leaves a run out (no share chosen); cache_none 0 and cache_most 1:
// every cached share "partial" (the two bounds gone); assumed_run_sd 0: one run a side
// assumes no run-to-run spread; bootstrap_rounds 400: four times the rounds (a Monte Carlo
// count is neutral when more of it changes nothing); min_stratum 1: a level kept with any
// request; power_target 0.5: runs to decide where the interval would just reach the
// threshold; tail_threshold_factor 1: a tail judged at --threshold. default_threshold and
// default_alpha are the comparison's meaning, not switched off.
var Neutral = map[string]float64{"disturbed_share": 0, "cache_none": 0, "cache_most": 1, "assumed_run_sd": 0,
	"bootstrap_rounds": 400, "min_stratum": 1, "power_target": 0.5, "tail_threshold_factor": 1}

// Core are the rules that make a verdict at all: without them there is no row or no verdict
// to judge, so Without keeps them and an ablation does not try them.
var Core = []string{RuleUndefined, RuleArithmetic, RuleInterval, RuleHolds, RuleBlocking, RuleVerdict, RuleMeasuredNothing, RuleAnswers}

// Value is the named constant of the policy's rules; a constant of a rule the policy lacks
// is DefaultPolicy's (the rules that read it are off, except where another rule shares it).
func (p Policy) Value(name string) float64 {
	for _, pp := range []Policy{p, DefaultPolicy} {
		if v, ok := policy.Policy(pp).Constant(name); ok {
			return v
		}
	}
	panic("compare: the policy has no constant " + name)
}

// minRunsKept is the fewest runs of a side that the disturbed-run rule leaves: two, the fewest
// whose spread (a sample variance, n − 1 ≥ 1) measures the run-to-run noise, so leaving a
// disturbed run out never turns a side's measured spread into an assumed one. It is the
// method's, not tuned.
const minRunsKept = 2

// knobs is a policy resolved for evaluation: its rules by ID and its constants by name.
type knobs struct {
	on                                   map[string]bool
	disturbedShare, cacheNone, cacheMost float64
	threshold, alpha, tailFactor, runSD  float64
	powerTarget                          float64
	rounds, minStratum                   int
}

func (p Policy) knobs() *knobs {
	k := &knobs{on: map[string]bool{}}
	for _, r := range p.Rules {
		k.on[r.ID] = true
	}
	v, n := p.Value, func(name string) int { return int(p.Value(name)) }
	k.disturbedShare = v("disturbed_share")
	k.cacheNone, k.cacheMost = v("cache_none"), v("cache_most")
	k.threshold, k.alpha, k.rounds = v("default_threshold"), v("default_alpha"), n("bootstrap_rounds")
	k.tailFactor, k.runSD = v("tail_threshold_factor"), v("assumed_run_sd")
	k.minStratum, k.powerTarget = n("min_stratum"), v("power_target")
	return k
}

func (k *knobs) has(id string) bool { return k.on[id] }

// defaultKnobs are DefaultPolicy's, for the figures made outside a comparison (Describe).
var defaultKnobs = DefaultPolicy.knobs()

// k is the policy that judged the row (DefaultPolicy's for a row made elsewhere).
func (r Row) k() *knobs {
	if r.pol == nil {
		return defaultKnobs
	}
	return r.pol
}

// k is the policy that judged the comparison (DefaultPolicy's for one made elsewhere).
func (r *Result) k() *knobs {
	if r.pol == nil {
		return defaultKnobs
	}
	return r.pol
}
