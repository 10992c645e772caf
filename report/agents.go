package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"servebench/metrics"
)

// Tool calls and agent tasks in the reports (metrics.Tools): a block of lines and a per-step
// table in text and Markdown, a "tools" object in JSON, and rows of the HTML summary table.
// A run that offered no tools shows none of them. Self-contained so that it can become one
// section of the report's document model as it is.

// textAgents writes the tool-call lines and, for agent tasks, the per-step table.
func textAgents(b *strings.Builder, s *metrics.Summary) {
	t := s.Tools
	if t == nil {
		return
	}
	for _, l := range agentLines(t) {
		line(b, l[0], "%s", l[1])
	}
	if t.Tasks != nil && len(t.Tasks.PerStep) > 0 {
		tw := tabwriter.NewWriter(b, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "step\tn\tTTFT p50\tTTFT p99\t1st call p50\t1st call p99\tcalls\tinvalid\t")
		for _, st := range t.Tasks.PerStep {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t\n", st.Step, st.N, msP(st.TTFT, 50), msP(st.TTFT, 99),
				msP(st.TimeToFirstCall, 50), msP(st.TimeToFirstCall, 99), st.Calls, st.Invalid)
		}
		tw.Flush()
		b.WriteString("(ms, per agent step: TTFT, and time to the first tool-call token of the steps that called a tool)\n")
	}
	b.WriteString("\n")
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

// mdAgents writes the tool figures and the per-step table in Markdown.
func mdAgents(b *strings.Builder, s *metrics.Summary) {
	t := s.Tools
	if t == nil {
		return
	}
	for _, l := range agentLines(t) {
		if l[0] != "" {
			b.WriteString("**" + l[0] + "**: ")
		}
		b.WriteString(mdEsc(l[1]) + "  \n")
	}
	b.WriteString("\n")
	if t.Tasks == nil || len(t.Tasks.PerStep) == 0 {
		return
	}
	b.WriteString("| step | n | TTFT p50 (ms) | TTFT p99 (ms) | 1st tool call p50 (ms) | 1st tool call p99 (ms) | calls | invalid |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, st := range t.Tasks.PerStep {
		fmt.Fprintf(b, "| %d | %d | %s | %s | %s | %s | %d | %d |\n", st.Step, st.N, msP(st.TTFT, 50), msP(st.TTFT, 99),
			msP(st.TimeToFirstCall, 50), msP(st.TimeToFirstCall, 99), st.Calls, st.Invalid)
	}
	b.WriteString("\n")
}

// jsonAgents adds the "tools" object: counts, the invalid share, vLLM-pattern keys for time to
// first tool call (ms) and argument tokens, and for agent tasks a "tasks" object with the
// per-task distributions and a per-step list.
func jsonAgents(o *object, s *metrics.Summary) {
	t := s.Tools
	if t == nil {
		return
	}
	to := &object{}
	to.set("requests", t.Requests)
	to.set("requests_with_tool_calls", t.WithCalls)
	to.set("tool_calls", t.Calls)
	to.set("invalid_tool_calls", t.Invalid)
	to.set("invalid_share", t.InvalidShare)
	to.set("tool_calls_by_name", t.ByName)
	to.set("first_invalid", t.InvalidExample)
	statKeys(to, "time_to_first_tool_call", "_ms", t.TimeToFirstCall, s.Percentiles, 1e6)
	statKeys(to, "argument_tokens", "", t.ArgTokens, s.Percentiles, 1)
	if k := t.Tasks; k != nil {
		ko := &object{}
		ko.set("started", k.Started)
		ko.set("completed", k.Completed)
		ko.set("failed", k.Failed)
		ko.set("answered", k.Answered)
		ko.set("at_step_limit", k.AtLimit)
		ko.set("max_steps", k.MaxSteps)
		statKeys(ko, "steps", "", k.Steps, s.Percentiles, 1)
		statKeys(ko, "task_latency", "_ms", k.Latency, s.Percentiles, 1e6)
		statKeys(ko, "step_time", "_ms", k.StepTime, s.Percentiles, 1e6)
		statKeys(ko, "tool_time", "_ms", k.ToolTime, s.Percentiles, 1e6)
		statKeys(ko, "client_time", "_ms", k.ClientTime, s.Percentiles, 1e6)
		var steps []*object
		for _, st := range k.PerStep {
			so := &object{}
			so.set("step", st.Step)
			so.set("completed", st.N)
			so.set("tool_calls", st.Calls)
			so.set("invalid_tool_calls", st.Invalid)
			statKeys(so, "ttft", "_ms", st.TTFT, s.Percentiles, 1e6)
			statKeys(so, "time_to_first_tool_call", "_ms", st.TimeToFirstCall, s.Percentiles, 1e6)
			steps = append(steps, so)
		}
		ko.set("steps_detail", steps)
		to.set("tasks", ko)
	}
	o.set("tools", to)
}

// agentSummaryRows are the HTML summary table's tool rows, when any run of the page offered
// tools: calls, invalid calls, time to first tool call, and for agent runs the task figures
// and each step's TTFT p50.
func agentSummaryRows(runs []Run) []tableRow {
	on, agents, steps := false, false, 0
	for _, r := range runs {
		if t := r.Summary.Tools; t != nil {
			on = true
			if t.Tasks != nil {
				agents = true
				steps = max(steps, len(t.Tasks.PerStep))
			}
		}
	}
	if !on {
		return nil
	}
	type fig struct {
		name string
		prec int
		v    func(t *metrics.Tools) *float64
	}
	stat := func(f func(t *metrics.Tools) metrics.Stat, p, div float64) func(t *metrics.Tools) *float64 {
		return func(t *metrics.Tools) *float64 {
			if v, ok := f(t).Percentile(p); ok {
				return ptr(v / div)
			}
			return nil
		}
	}
	task := func(f func(k *metrics.Tasks) metrics.Stat) func(t *metrics.Tools) metrics.Stat {
		return func(t *metrics.Tools) metrics.Stat {
			if t.Tasks == nil {
				return metrics.Stat{}
			}
			return f(t.Tasks)
		}
	}
	figs := []fig{
		{"tool calls", 0, func(t *metrics.Tools) *float64 { return ptr(float64(t.Calls)) }},
		{"invalid tool calls (%)", 1, func(t *metrics.Tools) *float64 { return ptr(100 * t.InvalidShare) }},
		{"time to first tool call p50 (ms)", 2, stat(func(t *metrics.Tools) metrics.Stat { return t.TimeToFirstCall }, 50, 1e6)},
	}
	if agents {
		figs = append(figs,
			fig{"agent tasks completed", 0, func(t *metrics.Tools) *float64 {
				if t.Tasks == nil {
					return nil
				}
				return ptr(float64(t.Tasks.Completed))
			}},
			fig{"steps per task (mean)", 2, func(t *metrics.Tools) *float64 {
				if t.Tasks == nil || !t.Tasks.Steps.Valid() {
					return nil
				}
				return ptr(t.Tasks.Steps.Mean)
			}},
			fig{"task latency p50 (s)", 3, stat(task(func(k *metrics.Tasks) metrics.Stat { return k.Latency }), 50, 1e9)},
			fig{"task latency p99 (s)", 3, stat(task(func(k *metrics.Tasks) metrics.Stat { return k.Latency }), 99, 1e9)},
			fig{"tool time per task p50 (s)", 3, stat(task(func(k *metrics.Tasks) metrics.Stat { return k.ToolTime }), 50, 1e9)})
		for i := range steps {
			figs = append(figs, fig{fmt.Sprintf("step %d TTFT p50 (ms)", i+1), 2, stat(task(func(k *metrics.Tasks) metrics.Stat {
				if i < len(k.PerStep) {
					return k.PerStep[i].TTFT
				}
				return metrics.Stat{}
			}), 50, 1e6)})
		}
	}
	var rows []tableRow
	for _, f := range figs {
		row := tableRow{Name: f.name}
		var vals []*float64
		for _, r := range runs {
			var v *float64
			if t := r.Summary.Tools; t != nil {
				v = f.v(t)
			}
			vals = append(vals, v)
			row.Cells = append(row.Cells, optf(v, f.prec))
		}
		if len(vals) == 2 {
			row.Delta = delta(vals[0], vals[1])
		}
		rows = append(rows, row)
	}
	return rows
}
