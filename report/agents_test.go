package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"servebench/metrics"
	"servebench/record"
)

// TestAgentReports renders one agent run's tool figures in every format: a task of two steps
// (the first calls a tool with invalid arguments, the second answers) after a 100 ms tool time.
func TestAgentReports(t *testing.T) {
	ms := int64(1e6)
	recs := []record.Record{
		{ID: 0, Phase: record.PhaseMeasure, Task: 1, Step: 1, Sent: 10 * ms, Done: 50 * ms, FirstToolCall: 30 * ms,
			Events:    []record.Event{{T: 30 * ms, N: 1}, {T: 40 * ms, N: 1}},
			ToolCalls: []record.ToolCall{{Name: "get_weather", ArgTokens: 6, Invalid: "at /: missing property 'city'"}}},
		{ID: 1, Phase: record.PhaseMeasure, Task: 1, Step: 2, Scheduled: 150 * ms, Dispatched: 150 * ms, Sent: 150 * ms, Done: 200 * ms,
			ToolTime: 100 * ms, Events: []record.Event{{T: 170 * ms, N: 1}, {T: 180 * ms, N: 1}}},
	}
	acc := metrics.NewAccumulator(metrics.Options{})
	for i := range recs {
		acc.Add(&recs[i])
	}
	s := acc.Summary()
	var txt, md, js, html bytes.Buffer
	if err := Text(&txt, nil, s); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, nil, s); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, nil, s); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, nil, s, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 of 2 completed requests called a tool; 1 calls (get_weather 1), 1 invalid (100.0%)",
		"missing property 'city'", "time to first tool call p50 20.00", "task latency p50 0.19", "tool time p50 0.10 s"} {
		if !strings.Contains(txt.String(), want) || !strings.Contains(md.String(), want) {
			t.Errorf("text or Markdown lacks %q:\n%s\n%s", want, txt.String(), md.String())
		}
	}
	var m map[string]any
	if err := json.Unmarshal(js.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	tools, _ := m["tools"].(map[string]any)
	tasks, _ := tools["tasks"].(map[string]any)
	if tools["invalid_tool_calls"] != 1.0 || tools["median_time_to_first_tool_call_ms"] != 20.0 || tasks["median_task_latency_ms"] != 190.0 ||
		tasks["median_tool_time_ms"] != 100.0 || tasks["median_client_time_ms"] != 0.0 {
		t.Errorf("JSON tools %v", tools)
	}
	for _, want := range []string{"Tool calls and agent tasks", "time to first tool call p50 20.00", "task latency p50 0.19",
		`<td class="l">2</td><td>1</td><td>20.00</td>`} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q: %s", want, html.String()[strings.Index(html.String(), "Tool calls"):][:1500])
		}
	}
}
