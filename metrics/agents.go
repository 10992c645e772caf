package metrics

import (
	"maps"
	"slices"
	"strconv"

	"servebench/record"
)

// Tools is a tool-calling run's figures: the calls the model streamed and whether their
// arguments met the tool's schema, and, for agent tasks (run --agent-steps), per-step and
// per-task figures. Definitions (docs/agents.md):
//
//   - Time to first tool call = the first tool-call piece's arrival − sent, over completed
//     requests that called a tool.
//   - Argument tokens: per call, the streamed pieces that carried argument text (one token
//     each, the "count" source).
//   - Invalid: a call whose arguments are not JSON, or break its tool's parameters schema, or
//     name a tool that was not offered. Share = invalid / calls.
//   - Task latency = last step's done − first step's sent, over tasks every step of which
//     completed. It is the sum of the steps' times (done − sent), the tool times waited
//     before the steps, and the client's own time (ClientTime: each later step's sent −
//     scheduled, its pause's lateness and the request's writing; the scheduled time of a
//     step is its predecessor's done + its tool time).
//
// It is nil for a run that offered no tools and streamed no call.
type Tools struct {
	Requests  int // completed measured requests
	WithCalls int // of them, those that answered with at least one tool call
	Calls     int
	Invalid   int
	// InvalidShare = Invalid / Calls (0 when no call).
	InvalidShare float64
	// ByName counts the calls per function name; InvalidExample names the first invalid call.
	ByName          map[string]int
	InvalidExample  string
	TimeToFirstCall Stat // ns
	ArgTokens       Stat // per call
	// Tasks are an agent run's figures; nil for a run without agent tasks.
	Tasks *Tasks
}

// Tasks are an agent run's per-task and per-step figures.
type Tasks struct {
	Started   int // measured tasks with at least one step recorded
	Completed int // tasks every step of which completed
	Failed    int // tasks with a failed step (they end there)
	// Answered counts completed tasks whose last step answered without a tool call;
	// AtLimit those whose last step still called a tool: they stopped at --agent-steps (or
	// at an agent trace's last step, or where sending stopped) with the call unanswered.
	Answered, AtLimit int
	MaxSteps          int  // the most steps a task took
	Steps             Stat // steps per completed task
	Latency           Stat // ns, per completed task: first sent → last done
	StepTime          Stat // ns, per completed task: Σ (done − sent) of its steps
	ToolTime          Stat // ns, per completed task: Σ tool time waited
	ClientTime        Stat // ns, per completed task: latency − step time − tool time
	PerStep           []StepSummary
}

// StepSummary is one step index of the agent tasks, over its completed measured requests.
type StepSummary struct {
	Step            int  `json:"step"`
	N               int  `json:"n"`
	TTFT            Stat `json:"ttft_ns"`
	TimeToFirstCall Stat `json:"time_to_first_tool_call_ns"`
	Calls           int  `json:"tool_calls"`
	Invalid         int  `json:"invalid_tool_calls"`
}

type toolAcc struct {
	offered                         bool
	requests, withCalls, calls, bad int
	byName                          map[string]int
	example                         string
	ttfc, args                      sample
	steps                           map[int]*stepAcc
	tasks                           map[int]*taskAcc // by task id
}

type stepAcc struct {
	n, calls, bad int
	ttft, ttfc    sample
}

type taskAcc struct {
	first, last          int64
	steps, maxStep       int
	stepTime, toolTime   int64
	failed, lastHadCalls bool
}

// add takes one measured request that was not cancelled.
func (a *toolAcc) add(r *record.Record) {
	if r.Agent() {
		a.addStep(r)
	}
	if !r.OK() {
		return
	}
	a.requests++
	if len(r.ToolCalls) == 0 {
		return
	}
	a.withCalls++
	if a.byName == nil {
		a.byName = map[string]int{}
	}
	for _, c := range r.ToolCalls {
		a.calls++
		a.byName[c.Name]++
		a.args.add(float64(c.ArgTokens))
		if c.Invalid != "" {
			a.bad++
			if a.example == "" {
				a.example = "request " + strconv.Itoa(r.ID) + ": " + c.Name + ": " + c.Invalid
			}
		}
	}
	if r.FirstToolCall > 0 && r.Sent > 0 {
		a.ttfc.add(float64(r.FirstToolCall - r.Sent))
	}
}

// addStep takes one step of an agent task into its task and its step index.
func (a *toolAcc) addStep(r *record.Record) {
	if a.tasks == nil {
		a.tasks, a.steps = map[int]*taskAcc{}, map[int]*stepAcc{}
	}
	t := a.tasks[r.Task]
	if t == nil {
		t = &taskAcc{first: r.Sent}
		a.tasks[r.Task] = t
	}
	t.steps++
	t.toolTime += r.ToolTime
	if r.Step == 1 || (r.Sent > 0 && r.Sent < t.first) {
		t.first = r.Sent
	}
	if r.Step >= t.maxStep {
		t.maxStep, t.last, t.lastHadCalls = r.Step, r.Done, len(r.ToolCalls) > 0
	}
	if !r.OK() || r.Sent == 0 {
		t.failed = true
		return
	}
	t.stepTime += r.Done - r.Sent
	s := a.steps[r.Step]
	if s == nil {
		s = &stepAcc{}
		a.steps[r.Step] = s
	}
	s.n++
	if v, ok := ttft(r); ok {
		s.ttft.add(float64(v))
	}
	if r.FirstToolCall > 0 {
		s.ttfc.add(float64(r.FirstToolCall - r.Sent))
	}
	for _, c := range r.ToolCalls {
		s.calls++
		if c.Invalid != "" {
			s.bad++
		}
	}
}

// summary is the run's tool figures; nil when no tools were offered and no call was made.
func (a *toolAcc) summary(ps []float64) *Tools {
	if !a.offered && a.calls == 0 && a.tasks == nil {
		return nil
	}
	t := &Tools{Requests: a.requests, WithCalls: a.withCalls, Calls: a.calls, Invalid: a.bad,
		ByName: a.byName, InvalidExample: a.example, TimeToFirstCall: a.ttfc.stat(ps), ArgTokens: a.args.stat(ps)}
	if a.calls > 0 {
		t.InvalidShare = float64(a.bad) / float64(a.calls)
	}
	if a.tasks != nil {
		t.Tasks = a.taskSummary(ps)
	}
	return t
}

// taskSummary sums the tasks up.
func (a *toolAcc) taskSummary(ps []float64) *Tasks {
	ts := &Tasks{Started: len(a.tasks)}
	var steps, lat, st, tt, ct sample
	for _, t := range a.tasks {
		ts.MaxSteps = max(ts.MaxSteps, t.maxStep)
		if t.failed {
			ts.Failed++
			continue
		}
		ts.Completed++
		if t.lastHadCalls {
			ts.AtLimit++
		} else {
			ts.Answered++
		}
		steps.add(float64(t.steps))
		l := t.last - t.first
		lat.add(float64(l))
		st.add(float64(t.stepTime))
		tt.add(float64(t.toolTime))
		ct.add(float64(l - t.stepTime - t.toolTime))
	}
	ts.Steps, ts.Latency, ts.StepTime, ts.ToolTime, ts.ClientTime = steps.stat(ps), lat.stat(ps), st.stat(ps), tt.stat(ps), ct.stat(ps)
	for _, k := range slices.Sorted(maps.Keys(a.steps)) {
		s := a.steps[k]
		ts.PerStep = append(ts.PerStep, StepSummary{Step: k, N: s.n, TTFT: s.ttft.stat(ps),
			TimeToFirstCall: s.ttfc.stat(ps), Calls: s.calls, Invalid: s.bad})
	}
	return ts
}

// toolsOffered reads from the header whether the run offered tools.
func toolsOffered(h *record.Header) bool {
	if h == nil {
		return false
	}
	tools, _ := h.Config["tools"].(string)
	return tools != ""
}

// toolSummary is the run's tool figures (Summary.Tools).
func (a *Accumulator) toolSummary(ps []float64) *Tools {
	a.tools.offered = a.tools.offered || toolsOffered(a.hdr)
	return a.tools.summary(ps)
}
