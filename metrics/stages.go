package metrics

import (
	"strconv"

	"servebench/record"
)

// A staged run (run --stages) is broken down by load stage: the stage each request was sent
// in (Record.Stage), numbered from 1. A stage's window runs from the first sent to the last
// done of its own measured requests, so a closed-loop stage's last requests, which finish in
// the next stage, count in the stage they were sent in, as a sweep point's would. Every stage
// of the header is listed (one nothing was sent in has an empty summary).
func init() {
	RegisterKey(Key{
		Name: "stage", Plural: "stages", Title: "Load stages", OwnWindow: true,
		Note: "per load stage, by the stage each request was sent in; latencies in ms; each stage's window runs from its first request sent to its last done",
		Of: func(h *record.Header, r *record.Record) (string, bool) {
			if r.Stage < 0 || r.Stage >= len(stagesOf(h)) {
				return "", false
			}
			return strconv.Itoa(r.Stage + 1), true
		},
		All: func(h *record.Header) []string {
			out := make([]string, len(stagesOf(h)))
			for i := range out {
				out[i] = strconv.Itoa(i + 1)
			}
			return out
		},
	})
}

// stagesOf is the load stages the header describes (none: nil).
func stagesOf(h *record.Header) []record.Stage {
	if h == nil || h.Load == nil {
		return nil
	}
	return h.Load.Stages
}

// stagedSteadiness is the whole run's steady-state check, except for a run of several load
// stages: its load changes by design, so a trend over the whole window says nothing about the
// server, and the check is reported as not tested.
func (a *Accumulator) stagedSteadiness(st *Steadiness) *Steadiness {
	if a.groups.sub || len(stagesOf(a.hdr)) < 2 {
		return st
	}
	return &Steadiness{Reason: "the run has several load stages: its load changes by design (see each stage's figures)"}
}
