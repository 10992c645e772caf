package compare

import (
	"fmt"
	"math"

	"servebench/metrics"
	"servebench/stat"
)

// AnswerRow compares one answer figure of the two sides: accuracy (answers right against the
// key) or valid answers (meeting the response format). Each side pools its runs' judged
// requests; the difference cand − base has Newcombe's hybrid score interval (stat.NewcombeDiff,
// at 1 − Alpha, as every row's: z the normal quantile 1 − Alpha/2). Change is Regressed when the whole interval lies below 0, Improved when above, "~"
// otherwise: any significant drop counts, with no threshold, since a server that answers
// worse is worse however much faster it is.
type AnswerRow struct {
	Name                    string
	BaseRight, BaseN        int
	CandRight, CandN        int
	Base, Cand              float64 // shares right
	Delta, DeltaLo, DeltaHi float64 // cand − base and its interval, as shares
	Change                  string
}

// answerFigures are the answer figures compared: right / judged of a run's Answers.
var answerFigures = []struct {
	name  string
	count func(a *metrics.Answers) (right, n int)
}{
	{"accuracy", func(a *metrics.Answers) (int, int) { return a.Correct, a.Scored }},
	{"valid answers", func(a *metrics.Answers) (int, int) { return a.Checked - a.Invalid, a.Checked }},
}

// compareAnswers fills r.Answers from both sides' judged answers (none when a side judged
// none) and makes a drop in either the verdict: a regressed answer figure makes the verdict
// Regressed whatever the latencies did, and says so in a warning.
func (r *Result) compareAnswers(br, cr []metrics.RunSummary) {
	alpha := r.Alpha
	if alpha == 0 {
		alpha = r.k().alpha
	}
	z := stat.TQuantile(1-alpha/2, math.Inf(1))
	for _, f := range answerFigures {
		bk, bn := pooled(br, f.count)
		ck, cn := pooled(cr, f.count)
		d, lo, hi, ok := stat.NewcombeDiff(bk, bn, ck, cn, z)
		if !ok {
			continue
		}
		row := AnswerRow{Name: f.name, BaseRight: bk, BaseN: bn, CandRight: ck, CandN: cn,
			Base: float64(bk) / float64(bn), Cand: float64(ck) / float64(cn), Delta: d, DeltaLo: lo, DeltaHi: hi, Change: "~"}
		switch {
		case hi < 0:
			row.Change = Regressed
		case lo > 0:
			row.Change = Improved
		}
		r.Answers = append(r.Answers, row)
		msg := fmt.Sprintf("%s %.1f%% (%d of %d) → %.1f%% (%d of %d): %+.1f points, %.4g%% interval %+.1f to %+.1f (Newcombe)",
			f.name, 100*row.Base, bk, bn, 100*row.Cand, ck, cn, 100*d, 100*(1-alpha), 100*lo, 100*hi)
		was := r.Verdict
		switch row.Change {
		case Regressed:
			r.warnf("%s regressed: %s; the candidate answers worse, so it is not an improvement however fast it is", f.name, msg)
			if r.Verdict != NotComparable && r.Verdict != MeasuredNothing {
				r.Verdict = Regressed
			}
		case Improved:
			r.warnf("%s improved: %s", f.name, msg)
			if r.Verdict == NoChange {
				r.Verdict = Improved
			}
		default:
			r.warnf("%s: no significant change: %s", f.name, msg)
		}
		figs := []Figure{fig("base_share", row.Base), fig("candidate_share", row.Cand), fig("delta", d), fig("delta_lo", lo), fig("delta_hi", hi)}
		if r.Verdict != was {
			addStep(&r.Why, RuleAnswers, r.Verdict, true, figs...)
		} else {
			stepf(&r.Why, RuleAnswers, figs, "%s %s", f.name, row.Change)
		}
	}
}

// pooled sums a figure's right and judged counts over a side's runs.
func pooled(runs []metrics.RunSummary, count func(*metrics.Answers) (int, int)) (right, n int) {
	for _, run := range runs {
		if a := run.Summary.Answers; a != nil {
			k, m := count(a)
			right, n = right+k, n+m
		}
	}
	return right, n
}
