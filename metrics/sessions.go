package metrics

import (
	"maps"
	"slices"

	"servebench/record"
)

// TurnSummary is one turn index of a multi-turn run, over the completed measured requests of
// that turn: the prompt grows with the history, so without a prefix cache TTFT rises with the
// turn, and with a working one it stays flat (only the new turn is prefilled).
type TurnSummary struct {
	Turn        int     `json:"turn"`
	N           int     `json:"n"`
	TTFT        Stat    `json:"ttft_ns"`
	InputTokens float64 `json:"mean_input_tokens"`
	// CachedShare is the share of the turn's prompt tokens the server reported cached (nil:
	// not reported).
	CachedShare *float64 `json:"cached_share"`
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

type turnAcc struct {
	ttft            sample
	in              float64
	n               int
	cached, cachedN float64
}

type sessionAcc struct {
	turns    map[int]*turnAcc
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
	if a.turns == nil {
		a.turns, a.open = map[int]*turnAcc{}, map[int]*sessionRun{}
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
	if !r.OK() {
		return
	}
	t := a.turns[r.Turn]
	if t == nil {
		t = &turnAcc{}
		a.turns[r.Turn] = t
	}
	if v, ok := ttft(r); ok {
		t.ttft.add(float64(v))
	}
	in, _ := promptTokens(r)
	t.in += float64(in)
	t.n++
	if c, ok := cachedPromptTokens(r); ok {
		t.cached += float64(c)
		t.cachedN += float64(in)
	}
}

// summaries are the per-turn and per-session figures, nil for a run without sessions.
func (a *sessionAcc) summaries(ps []float64) ([]TurnSummary, *SessionSummary) {
	if a.turns == nil {
		return nil, nil
	}
	var turns []TurnSummary
	for _, k := range slices.Sorted(maps.Keys(a.turns)) {
		t := a.turns[k]
		ts := TurnSummary{Turn: k, N: t.n, TTFT: t.ttft.stat(ps)}
		if t.n > 0 {
			ts.InputTokens = t.in / float64(t.n)
		}
		if t.cachedN > 0 {
			v := t.cached / t.cachedN
			ts.CachedShare = &v
		}
		turns = append(turns, ts)
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
	return turns, ss
}
