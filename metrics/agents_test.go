package metrics

import (
	"testing"

	"servebench/record"
)

// agentRecords are two tasks, times in ms: task 1 runs three steps (the last one answers),
// its steps' sends late by 1 ms and 2 ms after their tool times; task 2 fails at step 2.
func agentRecords() []record.Record {
	ms := int64(1e6)
	ev := func(t int64) []record.Event { return []record.Event{{T: t * ms, N: 1}, {T: (t + 1) * ms, N: 1}} }
	call := func(invalid string) []record.ToolCall {
		return []record.ToolCall{{Name: "get_weather", ID: "c", ArgTokens: 4, ArgBytes: 15, Invalid: invalid}}
	}
	return []record.Record{
		{ID: 0, Phase: record.PhaseMeasure, Task: 1, Step: 1, Scheduled: 0, Dispatched: 0, Sent: 10 * ms, Done: 50 * ms, Events: ev(20), FirstToolCall: 20 * ms, ToolCalls: call("")},
		{ID: 1, Phase: record.PhaseMeasure, Task: 1, Step: 2, Scheduled: 150 * ms, Dispatched: 150 * ms, Sent: 151 * ms, Done: 200 * ms, Events: ev(170), FirstToolCall: 170 * ms, ToolCalls: call("at /: missing property 'city'"), ToolTime: 100 * ms},
		{ID: 2, Phase: record.PhaseMeasure, Task: 1, Step: 3, Scheduled: 250 * ms, Dispatched: 251 * ms, Sent: 252 * ms, Done: 300 * ms, Events: ev(260), ToolTime: 50 * ms},
		{ID: 3, Phase: record.PhaseMeasure, Task: 2, Step: 1, Scheduled: 0, Dispatched: 0, Sent: 5 * ms, Done: 40 * ms, Events: ev(15), FirstToolCall: 15 * ms, ToolCalls: call("")},
		{ID: 4, Phase: record.PhaseMeasure, Task: 2, Step: 2, Scheduled: 60 * ms, Dispatched: 60 * ms, Sent: 61 * ms, Done: 70 * ms, ErrorClass: record.ErrHTTP5xx, Status: 500, ToolTime: 20 * ms},
	}
}

// TestToolSummary checks the tool and task figures against hand-computed values: task 1's
// latency 300 − 10 = 290 ms = steps (40 + 49 + 48) + tool times (100 + 50) + client time 3 ms.
func TestToolSummary(t *testing.T) {
	a := NewAccumulator(Options{})
	a.SetHeader(&record.Header{Config: map[string]any{"tools": "builtin:weather", "agent_steps": 3.0}})
	for _, r := range agentRecords() {
		a.Add(&r)
	}
	s := a.Summary().Tools
	if s == nil || s.Tasks == nil {
		t.Fatal("no tool summary")
	}
	if s.Requests != 4 || s.WithCalls != 3 || s.Calls != 3 || s.Invalid != 1 || s.ByName["get_weather"] != 3 {
		t.Errorf("calls: %+v", s)
	}
	if s.TimeToFirstCall.N != 3 || s.TimeToFirstCall.Median != 10e6 || s.ArgTokens.Mean != 4 {
		t.Errorf("time to first call %+v, argument tokens %+v: want 3 of 10 ms median, 4 tokens", s.TimeToFirstCall, s.ArgTokens)
	}
	k := s.Tasks
	if k.Started != 2 || k.Completed != 1 || k.Failed != 1 || k.Answered != 1 || k.AtLimit != 0 || k.MaxSteps != 3 {
		t.Errorf("tasks: %+v", k)
	}
	if k.Latency.Median != 290e6 || k.StepTime.Median != 137e6 || k.ToolTime.Median != 150e6 || k.ClientTime.Median != 3e6 {
		t.Errorf("task latency %v, steps %v, tools %v, client %v ms: want 290, 137, 150, 3",
			k.Latency.Median/1e6, k.StepTime.Median/1e6, k.ToolTime.Median/1e6, k.ClientTime.Median/1e6)
	}
	if len(k.PerStep) != 3 || k.PerStep[0].N != 2 || k.PerStep[0].TTFT.Median != 10e6 || k.PerStep[1].N != 1 || k.PerStep[1].Invalid != 1 || k.PerStep[2].TimeToFirstCall.N != 0 {
		t.Errorf("per step: %+v", k.PerStep)
	}
}

// TestNoToolSummary: a run that offered no tools and streamed no call has none.
func TestNoToolSummary(t *testing.T) {
	a := NewAccumulator(Options{})
	a.Add(&record.Record{Phase: record.PhaseMeasure, Sent: 1, Done: 5, Events: []record.Event{{T: 2, N: 1}}})
	if s := a.Summary(); s.Tools != nil {
		t.Errorf("tools %+v for a plain run", s.Tools)
	}
}
