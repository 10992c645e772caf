package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"servebench/record"
	"servebench/workload"
)

// Agent runs a multi-turn workload as agent tasks. A task is a session of the workload, its
// turns the steps: step 1 sends the task's prompt with the tools; whenever the model answers
// with tool calls, the client waits the tool's latency, appends the model's calls (an
// assistant message with tool_calls) and one "tool" message per call (tool_call_id, the next
// turn's user text as the tool's result) to the history, and sends the next step; the task
// ends when the model answers without a tool call, a step fails, or it reached its last
// step. Unlike a session, whose history is fixed before the run, an agent's history holds
// what the server answered: the calls it made are the ones sent back.
//
// A step's Scheduled is the previous step's Done plus the tool time, so a task's latency
// (first sent to last done) = Σ step (done − sent) + Σ tool time + Σ client delay (sent −
// scheduled: the pause's lateness and writing the request), each in the records.
type Agent struct {
	// ToolTime is the tool latency before each step after the first; a workload request
	// with its own ToolTime (an agent trace) waits that instead.
	ToolTime Dist
}

// Dist is a seeded distribution of durations: fixed, exponential of mean D, or lognormal of
// median D and shape Sigma (the σ of the underlying normal).
type Dist struct {
	Kind  string // "fixed", "exp" or "lognormal"
	D     time.Duration
	Sigma float64
}

// Draw draws one duration.
func (d Dist) Draw(rng *rand.Rand) time.Duration {
	switch d.Kind {
	case "exp":
		return time.Duration(rng.ExpFloat64() * float64(d.D))
	case "lognormal":
		return time.Duration(float64(d.D) * math.Exp(d.Sigma*rng.NormFloat64()))
	}
	return d.D
}

// String is the distribution as --tool-time takes it.
func (d Dist) String() string {
	switch d.Kind {
	case "exp":
		return "exp:" + d.D.String()
	case "lognormal":
		return fmt.Sprintf("lognormal:%v,%g", d.D, d.Sigma)
	}
	return d.D.String()
}

// agentStep is one step of a task in flight: what it sends and what it learned.
type agentStep struct {
	task, step int
	toolTime   int64
	history    []workload.Message
	// filled when the step ends
	done  int64
	ok    bool
	calls []workload.ToolCall
}

// request is the workload request w with the task's history as its messages, placed as a
// task step (not a session turn: the record's Task and Step say where it belongs).
func (a *agentStep) request(w *workload.Request) *workload.Request {
	c := *w.Materialize()
	c.Messages, c.Session, c.Turn = a.history, 0, 0
	return &c
}

func (a *agentStep) begin(rec *record.Record) {
	if a != nil {
		rec.Task, rec.Step, rec.ToolTime = a.task, a.step, a.toolTime
	}
}

func (a *agentStep) end(rec *record.Record, st *stamp) {
	if a != nil {
		a.done, a.ok, a.calls = rec.Done, rec.OK(), st.tools.history(a.step)
	}
}

// agentTask runs one task, whose steps are the workload requests turns, begun at start;
// false when sending stopped. rng draws its tool times.
func (s *state) agentTask(task int, turns []int, sess sessionPick, start int64, rng *rand.Rand) bool {
	first := s.r.Workload[turns[0]].Materialize()
	a := &agentStep{task: task, history: append([]workload.Message(nil), first.Messages...)}
	sched := start
	for k, wi := range turns {
		w := &s.r.Workload[wi]
		if k > 0 {
			if !a.ok || len(a.calls) == 0 {
				return true // answered without a tool call, or failed: the task is over
			}
			d := s.r.Agent.ToolTime.Draw(rng)
			if w.ToolTime > 0 {
				d = w.ToolTime
			}
			result := lastContent(w.Materialize())
			a.history = append(a.history, workload.Message{Role: "assistant", ToolCalls: a.calls})
			for _, c := range a.calls {
				a.history = append(a.history, workload.Message{Role: "tool", ToolCallID: c.ID, Content: result})
			}
			sched = a.done + int64(d)
			if !s.pause(time.Duration(sched - s.since())) {
				return false
			}
			a.toolTime = int64(d)
		}
		i, phase, ok := s.takeTurn(sched, sess.warm)
		if !ok {
			return false
		}
		a.step = k + 1
		s.inflight.Add(1)
		s.sendStep(s.r.recordID(i), wi, phase, sched, 0, a)
	}
	return true
}

// lastContent is the text of w's last message (a step's tool result: the turn's user text).
func lastContent(w *workload.Request) string {
	if n := len(w.Messages); n > 0 {
		return w.Messages[n-1].Content
	}
	return w.Prompt
}
