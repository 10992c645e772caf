package workload

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestReadAgentTasks(t *testing.T) {
	in := `{"task": "a", "step": 2, "parent": 1, "input_tokens": 30, "output_tokens": 4, "tool_time_ms": 250}
{"task": "b", "input_tokens": 5, "output_tokens": 6}
{"task": "a", "step": 1, "input_tokens": 10, "output_tokens": 3}
{"session_id": 7, "input_length": 100, "output_length": 10}
{"session_id": 7, "input_length": 150, "output_length": 12, "delay": 1.5}
`
	tasks, err := ReadAgentTasks(strings.NewReader(in), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 3 || tasks[0].ID != "a" || tasks[1].ID != "b" || tasks[2].ID != "7" {
		t.Fatalf("tasks %+v: want a, b, 7 in the order of their first lines", tasks)
	}
	a, s := tasks[0], tasks[2]
	if a.Inputs[0] != 10 || a.Inputs[1] != 30 || a.Outputs[1] != 4 || a.ToolTimes[0] != 0 || a.ToolTimes[1] != 250*time.Millisecond {
		t.Errorf("task a: %+v", a)
	}
	// AIPerf's input_length is the whole prompt: the step adds 150 − 100 − 10
	if s.Inputs[1] != 40 || s.ToolTimes[1] != 1500*time.Microsecond {
		t.Errorf("AIPerf-style task: %+v: want the second step to add 40 tokens after 1.5 ms", s)
	}
	for _, bad := range []struct{ in, want string }{
		{`{"task": "a", "step": 1, "input_tokens": 1, "output_tokens": 1}
{"task": "a", "step": 2, "parent": 1, "input_tokens": 1, "output_tokens": 1}
{"task": "a", "step": 3, "parent": 1, "input_tokens": 1, "output_tokens": 1}`, "branching"},
		{`{"task": "a", "step": 2, "input_tokens": 1, "output_tokens": 1}`, "without gaps"},
		{`{"task": "a", "input_tokens": 0, "output_tokens": 1}`, "lengths must be"},
		{`{"input_tokens": 1, "output_tokens": 1}`, "no task"},
		{`{"task": "a", "output_tokens": 1}`, "no input_tokens"},
		{`{"task": "a", "input_tokens": 1, "output_tokens": 1, "tool_time_ms": -1}`, "tool time"},
		{``, "no steps"},
	} {
		if _, err := ReadAgentTasks(strings.NewReader(bad.in), "t.jsonl"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one saying %q", bad.in, err, bad.want)
		}
	}
	at := AgentTrace{Count: 4, MaxSteps: 1, Seed: 1}
	ss, tt, _, err := at.Sessions(context.Background(), tasks, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 4 || len(ss[0].Turns) != 1 || len(tt[3]) != 1 || ss[3].Turns[0].UserTokens != 10 || ss[0].Turns[0].User == ss[3].Turns[0].User {
		t.Errorf("sessions: want 4 (the tasks cycled), one step each, task a's again as the fourth with text of its own")
	}
}
