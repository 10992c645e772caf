package sim

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// Reasoning output. A reasoning model (DeepSeek-R1, Qwen3, gpt-oss) first thinks, then
// answers; vLLM started with --reasoning-parser splits its output on chat completions into
// delta.reasoning (the thinking) and delta.content (the answer). The simulator does the same
// with --reasoning-tokens N: the first N output tokens of every chat request are reasoning
// (all of them when the request stops before N), the rest are the answer. Completions
// requests are not split, as vLLM does not parse reasoning there.

// Reasoning field names: vLLM sends "reasoning" since it renamed the field (vllm-project/vllm
// #27752, November 2025; "reasoning_content" was removed in January 2026, #33402); SGLang,
// DeepSeek's API and older vLLM send "reasoning_content".
const (
	ReasoningField        = "reasoning"
	ReasoningContentField = "reasoning_content"
)

// bindReasoningFlags registers the reasoning flags (called from BindFlags).
func bindReasoningFlags(fs *flag.FlagSet, c *Config) {
	fs.IntVar(&c.ReasoningTokens, "reasoning-tokens", c.ReasoningTokens, "the first N output tokens of each chat or Responses request are reasoning, streamed as delta.reasoning before the delta.content answer (Responses: reasoning_text.delta events of a reasoning item before the message) and counted in usage.completion_tokens_details.reasoning_tokens (Responses: output_tokens_details) (0 = no reasoning)")
	fs.StringVar(&c.ReasoningField, "reasoning-field", c.ReasoningField, "the delta field of reasoning text: reasoning (vLLM today) or reasoning_content (SGLang, DeepSeek, vLLM before 0.12)")
}

// validateReasoning checks the reasoning flags.
func (c *Config) validateReasoning() error {
	if c.ReasoningTokens < 0 {
		return fmt.Errorf("--reasoning-tokens must not be negative, got %d", c.ReasoningTokens)
	}
	switch c.ReasoningField {
	case "", ReasoningField, ReasoningContentField:
		return nil
	}
	return fmt.Errorf("--reasoning-field %q unknown (known: %s, %s)", c.ReasoningField, ReasoningField, ReasoningContentField)
}

// reasoningField is the delta key of reasoning text.
func (c *Config) reasoningField() string {
	if c.ReasoningField == "" {
		return ReasoningField
	}
	return c.ReasoningField
}

// reasoningFor is how many of the request's output tokens are reasoning: --reasoning-tokens
// capped at its output length, on chat only, and none when the request turns thinking off
// as Qwen3's and DeepSeek's chat templates allow (chat_template_kwargs.enable_thinking or
// .thinking false).
func (s *Server) reasoningFor(p *genParams) int {
	if !p.chat || s.cfg.ReasoningTokens <= 0 || p.req.thinkingOff() {
		return 0
	}
	return min(s.cfg.ReasoningTokens, p.target)
}

// thinkingOff reports whether chat_template_kwargs turns thinking off.
func (r *genRequest) thinkingOff() bool {
	for _, k := range []string{"enable_thinking", "thinking"} {
		if v, ok := r.ChatTemplateKwargs[k].(bool); ok && !v {
			return true
		}
	}
	return false
}

// appendReasoningDelta appends the choices of a chat chunk up to its delta's end when the
// request reasons: the chunk's tokens before the reasoning's end go to the reasoning field,
// the rest to content. A chunk that crosses the boundary carries both, content first, as
// vLLM's DeltaMessage serialises them (its reasoning parsers split the delta holding
// </think> that way).
func (st *streamer) appendReasoningDelta(b []byte) []byte {
	b = append(b, `"choices":[{"index":0,"delta":{`...)
	mid := min(max(st.reason, st.textFrom), st.written)
	if mid < st.written {
		b = append(b, `"content":"`...)
		b = appendWords(b, st.q.textSeed, mid, st.written)
		b = append(b, '"')
		if mid > st.textFrom {
			b = append(b, ',')
		}
	}
	if mid > st.textFrom {
		b = append(b, '"')
		b = append(b, st.s.cfg.reasoningField()...)
		b = append(b, `":"`...)
		b = appendWords(b, st.q.textSeed, st.textFrom, mid)
		b = append(b, '"')
	}
	return append(b, '}')
}

// appendWords appends the text of output tokens [from, to).
func appendWords(b []byte, seed uint64, from, to int) []byte {
	for i := from; i < to; i++ {
		b = append(b, outputPieces[outputWord(seed, i)]...)
	}
	return b
}

// contentKind is the truth-log kind of the content chunk about to be noted (tokens
// [textFrom, written)): "reasoning" when it carries reasoning text only, else "content".
func (st *streamer) contentKind() string {
	if st.reason > 0 && st.written <= st.reason && st.toolID == "" {
		return "reasoning"
	}
	return "content"
}

// appendReasoningUsage adds completion_tokens_details.reasoning_tokens to the usage object
// that b ends with, when the request reasons: OpenAI's field, which servebench reads for
// the reasoning token count.
func (st *streamer) appendReasoningUsage(b []byte) []byte {
	if st.reason <= 0 || len(b) == 0 || b[len(b)-1] != '}' {
		return b
	}
	b = append(b[:len(b)-1], `,"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(min(st.written, st.reason)), 10)
	return append(b, "}}"...)
}

// reasonJSON splits a non-streaming chat answer into message.reasoning and message.content,
// and reports the reasoning tokens in the usage, when the request reasons.
func (s *Server) reasonJSON(choice, usage map[string]any, p *genParams, q *seq) {
	n := s.reasoningFor(p)
	if n == 0 {
		return
	}
	var think, answer strings.Builder
	for i := range q.target {
		w := &answer
		if i < n {
			w = &think
		}
		w.WriteString(outputPieces[outputWord(q.textSeed, i)])
	}
	choice["message"] = map[string]any{"role": "assistant", "content": answer.String(), s.cfg.reasoningField(): think.String()}
	usage["completion_tokens_details"] = map[string]int{"reasoning_tokens": n}
}

// describeReasoning adds the reasoning settings to the simulator's description (its
// conditions and /version) when it reasons, so that a baseline without reasoning is told
// apart; without reasoning the description is as before.
func (c *Config) describeReasoning(d map[string]string) {
	if c.ReasoningTokens > 0 {
		d["reasoning_tokens"], d["reasoning_field"] = strconv.Itoa(c.ReasoningTokens), c.reasoningField()
	}
}
