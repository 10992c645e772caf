package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// Tool calls and agent tasks in the reports (metrics.Tools): one section of the document,
// lines and a per-step table, and a "tools" object in JSON. A run that offered no tools shows
// none of them.

func init() { RegisterSection("tools", 15, agentsSection) }

// agentsSection is the tool-call lines, the per-step table of agent tasks and the JSON
// "tools" object; nil for a run that offered no tools.
func agentsSection(_ *record.Header, s *metrics.Summary) *Section {
	t := s.Tools
	if t == nil {
		return nil
	}
	sec := &Section{Name: "tools", Title: "Tool calls and agent tasks", JSON: []Field{{"tools", agentsJSON(t, s.Percentiles)}}}
	for _, l := range agentLines(t) {
		sec.Lines = append(sec.Lines, Line{Label: l[0], Text: l[1]})
	}
	if t.Tasks != nil && len(t.Tasks.PerStep) > 0 {
		tb := &Table{Head: []string{"step", "n", "TTFT p50", "TTFT p99", "1st call p50", "1st call p99", "calls", "invalid"},
			Note: "ms, per agent step: TTFT, and time to the first tool-call token of the steps that called a tool"}
		for _, st := range t.Tasks.PerStep {
			tb.Rows = append(tb.Rows, []string{fmt.Sprint(st.Step), fmt.Sprint(st.N), msP(st.TTFT, 50), msP(st.TTFT, 99),
				msP(st.TimeToFirstCall, 50), msP(st.TimeToFirstCall, 99), fmt.Sprint(st.Calls), fmt.Sprint(st.Invalid)})
		}
		sec.Tables = append(sec.Tables, tb)
	}
	return sec
}

// agentLines are the labelled lines of the tool figures.
func agentLines(t *metrics.Tools) [][2]string {
	calls := fmt.Sprintf("%d of %d completed requests called a tool; %d calls (%s), %d invalid (%.1f%%)",
		t.WithCalls, t.Requests, t.Calls, byName(t.ByName), t.Invalid, fin(100*t.InvalidShare))
	if t.InvalidExample != "" {
		calls += "; first invalid: " + t.InvalidExample
	}
	out := [][2]string{{"tool calls", calls}}
	if t.Calls > 0 {
		out = append(out, [2]string{"", fmt.Sprintf("time to first tool call p50 %s, p99 %s ms; argument tokens per call mean %s, p50 %s",
			msP(t.TimeToFirstCall, 50), msP(t.TimeToFirstCall, 99), num(t.ArgTokens, t.ArgTokens.Mean, 1), percentileIn(t.ArgTokens, 50, 1))})
	}
	if k := t.Tasks; k != nil {
		out = append(out,
			[2]string{"agent tasks", fmt.Sprintf("%d started, %d completed (%d answered, %d ended on a tool call: the step limit), %d failed; steps per task mean %s, max %d",
				k.Started, k.Completed, k.Answered, k.AtLimit, k.Failed, num(k.Steps, k.Steps.Mean, 1), k.MaxSteps)},
			[2]string{"", fmt.Sprintf("task latency p50 %s, p99 %s s = steps p50 %s s + tool time p50 %s s + client time p50 %s, max %s ms",
				percentileIn(k.Latency, 50, 1e9), percentileIn(k.Latency, 99, 1e9), percentileIn(k.StepTime, 50, 1e9),
				percentileIn(k.ToolTime, 50, 1e9), msP(k.ClientTime, 50), num(k.ClientTime, k.ClientTime.Max, 1e6))})
	}
	return out
}

// byName lists the calls per function name, "name n, …" in name order.
func byName(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// agentsJSON is the "tools" object: counts, the invalid share, vLLM-pattern keys for time to
// first tool call (ms) and argument tokens, and for agent tasks a "tasks" object with the
// per-task distributions and a per-step list.
func agentsJSON(t *metrics.Tools, pcts []float64) *object {
	to := &object{}
	to.set("requests", t.Requests)
	to.set("requests_with_tool_calls", t.WithCalls)
	to.set("tool_calls", t.Calls)
	to.set("invalid_tool_calls", t.Invalid)
	to.set("invalid_share", t.InvalidShare)
	to.set("tool_calls_by_name", t.ByName)
	to.set("first_invalid", t.InvalidExample)
	statKeys(to, "time_to_first_tool_call", "_ms", t.TimeToFirstCall, pcts, 1e6)
	statKeys(to, "argument_tokens", "", t.ArgTokens, pcts, 1)
	if k := t.Tasks; k != nil {
		ko := &object{}
		ko.set("started", k.Started)
		ko.set("completed", k.Completed)
		ko.set("failed", k.Failed)
		ko.set("answered", k.Answered)
		ko.set("at_step_limit", k.AtLimit)
		ko.set("max_steps", k.MaxSteps)
		statKeys(ko, "steps", "", k.Steps, pcts, 1)
		statKeys(ko, "task_latency", "_ms", k.Latency, pcts, 1e6)
		statKeys(ko, "step_time", "_ms", k.StepTime, pcts, 1e6)
		statKeys(ko, "tool_time", "_ms", k.ToolTime, pcts, 1e6)
		statKeys(ko, "client_time", "_ms", k.ClientTime, pcts, 1e6)
		var steps []*object
		for _, st := range k.PerStep {
			so := &object{}
			so.set("step", st.Step)
			so.set("completed", st.N)
			so.set("tool_calls", st.Calls)
			so.set("invalid_tool_calls", st.Invalid)
			statKeys(so, "ttft", "_ms", st.TTFT, pcts, 1e6)
			statKeys(so, "time_to_first_tool_call", "_ms", st.TimeToFirstCall, pcts, 1e6)
			steps = append(steps, so)
		}
		ko.set("steps_detail", steps)
		to.set("tasks", ko)
	}
	return to
}
