package compare

import "fmt"

// The steps of the rules whose sites are spread over this package: each records, under its
// rule's ID (policy.go), what it did and the figures it read.

// judgeStep sets the row's change by the interval rule (judge) at threshold th and records it.
func (r *Row) judgeStep(th float64) {
	r.Change = judge(*r, th)
	addStep(&r.Why, RuleInterval, r.Change, true, fig("delta", r.Delta), fig("delta_lo", r.DeltaLo), fig("delta_hi", r.DeltaHi),
		fig("eq_lo", r.EqLo), fig("eq_hi", r.EqHi), fig("p", r.P), fig("threshold", th))
}

// explainStep applies Contention.Explains to the row and records the rule that fired.
func (r *Row) explainStep() {
	ch, rule := r.Contention.explain(*r)
	if rule == "" || !r.k().has(rule) {
		return
	}
	r.Change = ch
	c := r.Contention
	figs := []Figure{fig("delta_lo", r.DeltaLo), fig("delta_hi", r.DeltaHi),
		fig("equal_contention_delta", c.Row.Delta), fig("equal_contention_lo", c.Row.DeltaLo), fig("equal_contention_hi", c.Row.DeltaHi),
		fig("levels", float64(len(c.Levels)))}
	if c.Lone != nil {
		figs = append(figs, fig("lone_arrivals_delta", c.Lone.Delta), fig("lone_arrivals_lo", c.Lone.DeltaLo), fig("lone_arrivals_hi", c.Lone.DeltaHi))
	}
	addStep(&r.Why, rule, ch, true, figs...)
}

// holdSteps records, on each inconclusive row, the rule that decided whether it holds the
// verdict (blocks).
func (r *Result) holdSteps() {
	for i := range r.Rows {
		x := &r.Rows[i]
		h, rule := hold(*x)
		if rule == "" {
			continue
		}
		effect := "does not hold the verdict"
		if h {
			effect = "holds the verdict at inconclusive"
		}
		var figs []Figure
		switch rule {
		case RuleContentionClears:
			figs = []Figure{fig("equal_contention_delta", x.Contention.Row.Delta), fig("equal_contention_eq_lo", x.Contention.Row.EqLo),
				fig("equal_contention_eq_hi", x.Contention.Row.EqHi), fig("levels", float64(len(x.Contention.Levels)))}
			if l := x.Contention.Lone; l != nil {
				figs = append(figs, fig("lone_arrivals_eq_lo", l.EqLo), fig("lone_arrivals_eq_hi", l.EqHi))
			}
		case RuleTailNotMoved:
			figs = []Figure{fig("p", x.P), fig("alpha", x.k().alpha)}
		}
		stepf(&x.Why, rule, figs, "%s", effect)
	}
}

// disturbedSteps records the runs left out or kept as disturbed, and those briefly disturbed.
func (r *Result) disturbedSteps() {
	for _, d := range r.Disturbed {
		figs := []Figure{fig("disturbed_s", d.Seconds), fig("window_s", d.Window), fig("share", d.Seconds/d.Window)}
		if d.Kept {
			stepf(&r.Why, RuleDisturbedRuns, figs, "kept %s run %d: fewer than %d runs of the side would remain", d.Side, d.Run+1, minRunsKept)
			continue
		}
		stepf(&r.Why, RuleDisturbedRuns, figs, "left out %s run %d from every metric", d.Side, d.Run+1)
	}
	for _, d := range r.Brief {
		stepf(&r.Why, RuleBrieflyDisturbed, []Figure{fig("disturbed_s", d.Seconds), fig("window_s", d.Window)}, "kept %s run %d, named", d.Side, d.Run+1)
	}
}

// runsText is a runs-per-side figure in words (0: no count of runs would).
func runsText(n int) string {
	if n == 0 {
		return "none (a delta on the threshold)"
	}
	return fmt.Sprint(n)
}
