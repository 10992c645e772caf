package metrics

import (
	"slices"

	"servebench/record"
)

// RunSummary is the summary of one run of a records file, with the run's index and label.
type RunSummary struct {
	Run     int
	Label   string
	Summary *Summary
}

// Runs is the one per-run grouping of records: a file may hold several runs (--repeat, sweep
// points), told apart by Record.Run, and pooling them would put the gaps between runs into the
// window and mix different loads, so each run gets its own Accumulator. The zero value is not
// ready: use NewRuns.
type Runs struct {
	hdr  *record.Header
	opt  Options
	accs map[int]*Accumulator
}

// NewRuns groups the records of the file whose header is h, each run summarised with opt.
func NewRuns(h *record.Header, opt Options) *Runs {
	return &Runs{hdr: h, opt: opt, accs: map[int]*Accumulator{}}
}

// Add puts r into its run's accumulator. The record may be reused by the caller afterwards.
func (p *Runs) Add(r *record.Record) { p.Acc(r.Run).Add(r) }

// Acc returns run's accumulator, created on first use.
func (p *Runs) Acc(run int) *Accumulator {
	acc := p.accs[run]
	if acc == nil {
		acc = NewAccumulator(p.opt)
		acc.SetHeader(p.hdr)
		p.accs[run] = acc
	}
	return acc
}

// Indexes are the run indexes seen, in order.
func (p *Runs) Indexes() []int {
	out := make([]int, 0, len(p.accs))
	for run := range p.accs {
		out = append(out, run)
	}
	slices.Sort(out)
	return out
}

// Summaries are the runs in index order, labelled from the header's run-end lines. A file with
// no record at all still has one (empty) run, so that a summary says "0 completed".
func (p *Runs) Summaries() []RunSummary {
	if len(p.accs) == 0 {
		p.Acc(0)
	}
	labels := map[int]string{}
	if p.hdr != nil {
		for _, e := range p.hdr.Ends {
			labels[e.Run] = e.Label
		}
	}
	p.poolPromptEvals()
	var out []RunSummary
	for _, run := range p.Indexes() {
		out = append(out, RunSummary{Run: run, Label: labels[run], Summary: p.accs[run].Summary()})
	}
	return out
}

// poolPromptEvals gives every run the prompt evaluations of the runs before it to judge cache
// hits against (Accumulator.After), in index order, as run judged them when it wrote the file.
func (p *Runs) poolPromptEvals() {
	var prev *Accumulator
	for _, run := range p.Indexes() {
		p.accs[run].coldWarm.earlier = nil
		p.accs[run].After(prev)
		prev = p.accs[run]
	}
}
