package sim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// reasoningChunk is a chat chunk's reasoning-related fields as the test reads them.
type reasoningChunk struct {
	Choices []struct {
		Delta map[string]*string `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		Completion int `json:"completion_tokens"`
		Details    *struct {
			Reasoning int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
}

// streamReasoning streams one chat request and returns its reasoning and answer text, the
// tokens of each (by the simulator's own count), and the final usage's reasoning tokens (-1
// when absent).
func streamReasoning(t *testing.T, base string, body map[string]any, hdr ...string) (think, answer string, details int) {
	t.Helper()
	resp := post(t, base+"/v1/chat/completions", body, hdr...)
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	details = -1
	for _, e := range evs {
		if e.data == "[DONE]" || e.data == "" {
			continue
		}
		var c reasoningChunk
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			t.Fatalf("chunk %s: %v", e.data, err)
		}
		for _, ch := range c.Choices {
			var r string
			for _, k := range []string{ReasoningField, ReasoningContentField} {
				if v := ch.Delta[k]; v != nil {
					r += *v
				}
			}
			if r != "" && answer != "" {
				t.Errorf("reasoning %q after the answer began", r)
			}
			think += r
			if v := ch.Delta["content"]; v != nil {
				answer += *v
			}
		}
		if c.Usage != nil && len(c.Choices) == 0 && c.Usage.Details != nil {
			details = c.Usage.Details.Reasoning
		}
	}
	return think, answer, details
}

func chatBody(n int, extra map[string]any) map[string]any {
	b := map[string]any{"messages": []map[string]any{{"role": "user", "content": words(5)}}, "max_tokens": n,
		"ignore_eos": true, "stream": true, "stream_options": map[string]any{"include_usage": true}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// TestReasoningStream checks the reasoning phase: the first --reasoning-tokens tokens go to
// delta.reasoning, the rest to delta.content, usage counts them, a multi-token chunk that
// crosses the boundary carries both, and a request that turns thinking off gets none.
func TestReasoningStream(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	c := fixedConfig(time.Millisecond, 100*time.Microsecond)
	c.ReasoningTokens = 6
	_, base := startSim(t, c)
	for _, tc := range []struct {
		name          string
		n             int
		extra         map[string]any
		hdr           []string
		think, answer int
		details       int
	}{
		{"split", 10, nil, nil, 6, 4, 6},
		{"all thinking", 4, nil, nil, 4, 0, 4},
		{"chunk across the boundary", 10, nil, []string{"X-Sim-Fault", "multi_token=4"}, 6, 4, 6},
		{"thinking off", 10, map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}}, nil, 0, 10, -1},
	} {
		think, answer, details := streamReasoning(t, base, chatBody(tc.n, tc.extra), tc.hdr...)
		if countTokens(think) != tc.think || countTokens(answer) != tc.answer || details != tc.details {
			t.Errorf("%s: %d reasoning tokens, %d answer tokens, usage reasoning_tokens %d; want %d, %d, %d",
				tc.name, countTokens(think), countTokens(answer), details, tc.think, tc.answer, tc.details)
		}
	}
}

// TestReasoningOffByDefault keeps the default stream free of reasoning fields.
func TestReasoningOffByDefault(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, fixedConfig(time.Millisecond, 100*time.Microsecond))
	think, answer, details := streamReasoning(t, base, chatBody(5, nil))
	if think != "" || countTokens(answer) != 5 || details != -1 {
		t.Errorf("default: reasoning %q, %d answer tokens, details %d; want none, 5, absent", think, countTokens(answer), details)
	}
}

// TestReasoningFieldAndJSON checks --reasoning-field and the non-streaming answer.
func TestReasoningFieldAndJSON(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	c := fixedConfig(time.Millisecond, 100*time.Microsecond)
	c.ReasoningTokens, c.ReasoningField = 3, ReasoningContentField
	srv, base := startSim(t, c)
	if d := srv.Describe(); d["reasoning_tokens"] != "3" || d["reasoning_field"] != ReasoningContentField {
		t.Errorf("describe: reasoning_tokens %q, reasoning_field %q", d["reasoning_tokens"], d["reasoning_field"])
	}
	resp := post(t, base+"/v1/chat/completions", chatBody(5, map[string]any{"stream": false}))
	var out struct {
		Choices []struct {
			Message map[string]string `json:"message"`
		} `json:"choices"`
		Usage struct {
			Details struct {
				Reasoning int `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	m := out.Choices[0].Message
	if countTokens(m[ReasoningContentField]) != 3 || countTokens(m["content"]) != 2 || out.Usage.Details.Reasoning != 3 {
		t.Errorf("non-streaming: message %v, reasoning_tokens %d; want 3 reasoning_content and 2 content tokens", m, out.Usage.Details.Reasoning)
	}
	resp = post(t, base+"/v1/chat/completions", chatBody(5, nil))
	evs, _ := readSSE(resp.Body)
	resp.Body.Close()
	if len(evs) == 0 || !strings.Contains(evs[0].data, `"reasoning_content":`) {
		t.Errorf("first chunk %+v, want reasoning_content", evs)
	}
}

// TestReasoningValidate names the flag at fault.
func TestReasoningValidate(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	for _, bad := range []func(*Config){
		func(c *Config) { c.ReasoningTokens = -1 },
		func(c *Config) { c.ReasoningField = "thoughts" },
	} {
		c := fixedConfig(time.Millisecond, time.Millisecond)
		bad(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--reasoning-") {
			t.Errorf("Validate: %v, want an error naming the reasoning flag", err)
		}
	}
}
