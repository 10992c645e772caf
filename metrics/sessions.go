package metrics

import (
	"strconv"

	"servebench/record"
)

// A multi-turn run is broken down by turn index (Record.Turn): the prompt grows with the
// history, so without a prefix cache TTFT rises with the turn, and with a working one it stays
// flat (only the new turn is prefilled).
func init() {
	RegisterKey(Key{
		Name: "turn", Plural: "turns", Title: "Turns",
		Note: "per turn index of the sessions; latencies in ms",
		Of: func(_ *record.Header, r *record.Record) (string, bool) {
			return strconv.Itoa(r.Turn), r.Turn > 0
		},
	})
}

// SessionSummary is the session-level figures of a multi-turn run. A session is counted from
// its first turn's send to its last turn's end; it is complete when every turn it sent
// succeeded and it reached its last turn.
type SessionSummary struct {
	Started   int  `json:"started"`
	Completed int  `json:"completed"`
	Turns     Stat `json:"turns"`       // turns sent per session
	Duration  Stat `json:"duration_ns"` // first sent → last done
}

type sessionAcc struct {
	open     map[int]*sessionRun // by session id: the instance in progress
	done     []*sessionRun
	maxTurns int
}

type sessionRun struct {
	start, end int64
	turns      int
	ok         bool
	last       int
}

// add takes one measured request of a session (warmup turns are not in any figure).
func (a *sessionAcc) add(r *record.Record) {
	if r.Turn == 0 {
		return
	}
	if a.open == nil {
		a.open = map[int]*sessionRun{}
	}
	a.maxTurns = max(a.maxTurns, r.Turn)
	run := a.open[r.Session]
	if r.Turn == 1 || run == nil {
		if run != nil {
			a.done = append(a.done, run)
		}
		run = &sessionRun{start: r.Sent, ok: true}
		a.open[r.Session] = run
	}
	run.turns++
	run.last = r.Turn
	run.end = max(run.end, r.Done)
	run.ok = run.ok && r.OK()
}

// summary is the per-session figures, nil for a run without sessions.
func (a *sessionAcc) summary(ps []float64) *SessionSummary {
	if a.open == nil {
		return nil
	}
	runs := append([]*sessionRun(nil), a.done...)
	for _, r := range a.open {
		runs = append(runs, r)
	}
	ss := &SessionSummary{Started: len(runs)}
	var n, dur sample
	for _, r := range runs {
		if r.ok && r.last == a.maxTurns {
			ss.Completed++
		}
		n.add(float64(r.turns))
		if r.end > r.start && r.start > 0 {
			dur.add(float64(r.end - r.start))
		}
	}
	ss.Turns, ss.Duration = n.stat(ps), dur.stat(ps)
	return ss
}
