package sim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"servebench/schema"
)

const testTools = `[{"type": "function", "function": {"name": "get_forecast", "parameters": {"type": "object",
 "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 14},
 "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city", "days"], "additionalProperties": false}}},
 {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}]`

// toolCallOf streams one chat request offering testTools and joins its tool call: the name,
// the arguments text and how many chunks carried a piece; "" name for a plain answer.
func toolCallOf(t *testing.T, base string, prompt, choice string, n int) (name, args string, pieces int, finish string) {
	t.Helper()
	body := map[string]any{"stream": true, "max_tokens": n, "ignore_eos": true, "tool_choice": choice,
		"messages": []map[string]string{{"role": "user", "content": prompt}}, "tools": json.RawMessage(testTools)}
	resp := post(t, base+"/v1/chat/completions", body)
	defer resp.Body.Close()
	evs, err := readSSE(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Function struct {
							Name      string  `json:"name"`
							Arguments *string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(e.data), &c) != nil || len(c.Choices) == 0 {
			continue
		}
		for _, tc := range c.Choices[0].Delta.ToolCalls {
			name += tc.Function.Name
			if tc.Function.Arguments != nil {
				args += *tc.Function.Arguments
				pieces++
			}
		}
		if f := c.Choices[0].FinishReason; f != nil {
			finish = *f
		}
	}
	return name, args, pieces, finish
}

// TestToolCalls: with tool_choice auto about --tool-call-rate of the prompts get a call,
// required and a named function always, none never; each call's arguments come in one piece
// per token after the first (the name's), finish with "tool_calls", and meet the tool's
// schema unless the call is in the --tool-call-invalid share.
func TestToolCalls(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	c := fixedConfig(time.Millisecond, 0)
	c.Tools = Tools{CallRate: 0.5, CallInvalid: 0.25}
	_, base := startSim(t, c)
	sc := map[string]*schema.Schema{}
	var list []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal([]byte(testTools), &list); err != nil {
		t.Fatal(err)
	}
	for _, x := range list {
		s, err := schema.Compile(x.Function.Name, x.Function.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		sc[x.Function.Name] = s
	}
	const n = 200
	calls, invalid := 0, 0
	for i := range n {
		name, args, pieces, finish := toolCallOf(t, base, fmt.Sprintf("prompt %d about the weather", i), "auto", 12)
		if name == "" {
			continue
		}
		calls++
		// the finish reason rides on the last token's chunk, which the engine may release
		// before it marks the sequence finished (then no chunk carries it): not asserted absent
		if pieces != 11 || (finish != "" && finish != "tool_calls") {
			t.Fatalf("call %d: %d argument pieces, finish %q: want 11 and tool_calls", i, pieces, finish)
		}
		if err := sc[name].Validate([]byte(args)); err != nil {
			invalid++
		}
	}
	t.Logf("auto: %d of %d answers were calls, %d of them invalid", calls, n, invalid)
	if calls < 70 || calls > 130 {
		t.Errorf("%d of %d auto answers were tool calls: want about half (--tool-call-rate 0.5)", calls, n)
	}
	if share := float64(invalid) / float64(calls); share < 0.1 || share > 0.4 {
		t.Errorf("%d of %d calls invalid: want about a quarter (--tool-call-invalid 0.25)", invalid, calls)
	}
	for _, choice := range []string{"required", "none"} {
		name, _, _, _ := toolCallOf(t, base, "one prompt", choice, 8)
		if (choice == "required") != (name != "") {
			t.Errorf("tool_choice %s: call %q", choice, name)
		}
	}
	body := map[string]any{"stream": true, "max_tokens": 4, "tool_choice": map[string]any{"type": "function", "function": map[string]string{"name": "nope"}},
		"messages": []map[string]string{{"role": "user", "content": "x"}}, "tools": json.RawMessage(testTools)}
	if resp := post(t, base+"/v1/chat/completions", body); resp.StatusCode != 400 {
		t.Errorf("tool_choice naming no tool: HTTP %d, want 400", resp.StatusCode)
	}
	bad := DefaultConfig()
	bad.Tools.CallInvalid = 1.5
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "--tool-call-invalid") {
		t.Errorf("--tool-call-invalid 1.5: %v", err)
	}
}
