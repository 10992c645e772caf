package openai

import "encoding/json"

// Reasoning output on chat completions. vLLM's and SGLang's reasoning parsers send a
// reasoning model's thinking in delta.reasoning (vLLM today) or delta.reasoning_content
// (SGLang, DeepSeek, vLLM before the rename) and its answer in delta.content; the chunk that
// holds the end of the thinking may carry both. Every such event is a content event (TTFT
// is to the first of any kind, docs/design/METRICS.md); one with reasoning text and no answer text and
// no tool call is also reported as reasoning, so that the record knows the first answer
// event. The reasoning token count comes from usage.completion_tokens_details
// .reasoning_tokens where the server sends it (OpenAI's field; the simulator sends it).

// reasoningOnly reports whether the decoded chunk carries reasoning text and nothing else
// generated: no completions text, no answer content, no tool call in any choice.
func (c *chunk) reasoningOnly() bool {
	reasoning := false
	for i := range c.Choices {
		ch := &c.Choices[i]
		dl := &ch.Delta
		if bool(ch.Text || dl.Content) || bool(dl.ToolCalls.any) {
			return false
		}
		reasoning = reasoning || bool(dl.ReasoningContent || dl.Reasoning)
	}
	return reasoning
}

// completionDetails is OpenAI's usage.completion_tokens_details.
type completionDetails struct {
	Reasoning int `json:"reasoning_tokens"`
	// hasReasoning is true when the server sent reasoning_tokens at all (a 0 included).
	hasReasoning bool
}

// UnmarshalJSON is encoding/json's path (the scanner's fallback) with the presence rule.
func (d *completionDetails) UnmarshalJSON(b []byte) error {
	var v struct {
		Reasoning *int `json:"reasoning_tokens"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v.Reasoning != nil {
		d.Reasoning, d.hasReasoning = *v.Reasoning, true
	}
	return nil
}

var completionDetailsKeys = []string{"reasoning_tokens"}

// completionDetails decodes usage.completion_tokens_details; null leaves it as it is.
func (s *scanner) completionDetails(d *completionDetails) bool {
	if s.Null() {
		return true
	}
	return s.Object(func(key []byte) bool {
		if string(key) == "reasoning_tokens" {
			if s.Null() {
				return true
			}
			d.hasReasoning = true
			return s.Int(&d.Reasoning)
		}
		_, ok := s.Value()
		return ok
	})
}
