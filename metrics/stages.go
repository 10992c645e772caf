package metrics

import "servebench/record"

// StageSummary is one load stage's figures (run --stages): the stage as the header describes
// it and the summary of the requests sent in it. A stage's window runs from the first sent to
// the last done of its own measured requests, so a closed-loop stage's last requests, which
// finish in the next stage, count in the stage they were sent in, as a sweep point's would.
type StageSummary struct {
	Index   int          // from 0 (record.Record.Stage)
	Load    record.Stage // users or rate, and duration
	Summary *Summary
}

// stageAcc keeps one Accumulator per load stage, made on first use; nil stages in a file
// without any.
type stageAcc struct {
	sub  bool // this Accumulator is itself a stage's: it keeps no stages of its own
	accs []*Accumulator
}

// stagesOf is the load stages the header describes (none: nil).
func stagesOf(h *record.Header) []record.Stage {
	if h == nil || h.Load == nil {
		return nil
	}
	return h.Load.Stages
}

// addStage adds r to the accumulator of its stage, when the run has stages. Every record goes
// there (warmup and cooldown too), so each stage's Accumulator applies the same rules as the
// run's own.
func (a *Accumulator) addStage(r *record.Record) {
	sts := stagesOf(a.hdr)
	if a.stages.sub || len(sts) == 0 || r.Stage < 0 || r.Stage >= len(sts) {
		return
	}
	if a.stages.accs == nil {
		a.stages.accs = make([]*Accumulator, len(sts))
	}
	acc := a.stages.accs[r.Stage]
	if acc == nil {
		acc = NewAccumulator(a.opt)
		acc.stages.sub = true
		a.stages.accs[r.Stage] = acc
	}
	acc.Add(r)
}

// stageSummaries are the stages' summaries in order, each stage of the header listed (a stage
// nothing was sent in has an empty summary: 0 completed, figures undefined).
func (a *Accumulator) stageSummaries() []StageSummary {
	sts := stagesOf(a.hdr)
	if a.stages.sub || len(sts) == 0 {
		return nil
	}
	out := make([]StageSummary, len(sts))
	for i, st := range sts {
		acc := NewAccumulator(a.opt)
		if i < len(a.stages.accs) && a.stages.accs[i] != nil {
			acc = a.stages.accs[i]
		}
		acc.stages.sub = true
		out[i] = StageSummary{Index: i, Load: st, Summary: acc.Summary()}
	}
	return out
}

// stagedSteadiness is the whole run's steady-state check, except for a run of several load
// stages: its load changes by design, so a trend over the whole window says nothing about the
// server, and the check is reported as not tested.
func (a *Accumulator) stagedSteadiness(st *Steadiness) *Steadiness {
	if a.stages.sub || len(stagesOf(a.hdr)) < 2 {
		return st
	}
	return &Steadiness{Reason: "the run has several load stages: its load changes by design (see each stage's figures)"}
}
