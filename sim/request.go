package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
)

// The simulator parses requests with its own code (never package client's), so that a
// parsing bug on one side cannot hide the same bug on the other.

// genRequest is the subset of the OpenAI completions / chat completions request (plus
// vLLM's extensions) that the simulator honours.
type genRequest struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	MinTokens           int             `json:"min_tokens"`
	IgnoreEOS           bool            `json:"ignore_eos"`
	Stream              bool            `json:"stream"`
	ChatTemplateKwargs  map[string]any  `json:"chat_template_kwargs"` // enable_thinking (reasoning.go)
	Tools               json.RawMessage `json:"tools"`                // tools.go
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ResponseFormat      json.RawMessage `json:"response_format"` // structured output (jsongen.go)
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	// media are the images and audio clips of a chat request's content parts (media.go)
	media []mediaInput
}

// chatMessage content is a string or a list of parts ({"type":"text","text":...}, image and
// audio parts). It is decoded once, as any: a request with megabytes of base64 images is
// scanned by encoding/json once rather than again for its parts.
type chatMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
	// ToolCalls are an assistant message's calls: their arguments are prompt text too
	ToolCalls []struct {
		Function struct {
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// Default output lengths when max_tokens is absent: OpenAI's legacy completions default is
// 16; for chat vLLM would allow the whole context, which makes unbounded simulated streams,
// so the simulator caps the default.
const (
	defaultCompletionTokens = 16
	defaultChatTokens       = 256
)

// promptText returns the prompt as text (chat: the message contents joined by spaces, so
// the token count is the sum of the contents' counts) and, for a prompt given as token ids,
// their count.
func (r *genRequest) promptText(chat bool) (text string, idCount int, err error) {
	if chat {
		if len(r.Messages) == 0 {
			return "", 0, errors.New("messages must not be empty")
		}
		parts := make([]string, 0, len(r.Messages))
		for i, m := range r.Messages {
			c, err := messageContent(m.Content, &r.media)
			if err != nil {
				return "", 0, fmt.Errorf("messages[%d].content: %w", i, err)
			}
			parts = append(parts, c)
			for _, tc := range m.ToolCalls {
				parts = append(parts, tc.Function.Arguments)
			}
		}
		return strings.Join(parts, " "), 0, nil
	}
	return parsePrompt(r.Prompt)
}

// parsePrompt accepts a string, a one-element list of strings, a list of token ids, or a
// one-element list of token-id lists (the shapes the completions API allows).
func parsePrompt(raw json.RawMessage) (string, int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, errors.New("prompt is required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, 0, nil
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil {
		if len(ss) != 1 {
			return "", 0, errors.New("prompt: the simulator accepts one prompt per request")
		}
		return ss[0], 0, nil
	}
	var ids []int
	if json.Unmarshal(raw, &ids) == nil {
		return "", len(ids), nil
	}
	var idss [][]int
	if json.Unmarshal(raw, &idss) == nil && len(idss) == 1 {
		return "", len(idss[0]), nil
	}
	return "", 0, errors.New("prompt must be a string or a list of token ids")
}

// messageContent reads a message's content: a string, or a list of parts whose text parts are
// joined and whose image and audio parts are added to media (media.go).
func messageContent(c any, media *[]mediaInput) (string, error) {
	switch v := c.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case []any:
		return parseParts(v, media)
	}
	return "", errors.New("must be a string or a list of parts")
}

// maxTokens is the requested output cap (max_completion_tokens wins for chat).
func (r *genRequest) maxTokens(chat bool) int {
	switch {
	case chat && r.MaxCompletionTokens != nil:
		return *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		return *r.MaxTokens
	case chat:
		return defaultChatTokens
	}
	return defaultCompletionTokens
}

// outputLength decides how many tokens to generate. With ignore_eos, or min_tokens at or
// above max_tokens, it is exactly max_tokens. Otherwise the simulated EOS falls at a length
// drawn uniformly from [max(min_tokens,1), max_tokens] by a hash of the prompt and the seed:
// the same prompt always stops at the same place, as a greedy model would.
func outputLength(maxTok, minTok int, ignoreEOS bool, promptHash uint64) int {
	if ignoreEOS || minTok >= maxTok {
		return maxTok
	}
	lo := max(minTok, 1)
	return lo + int(mix64(promptHash)%uint64(maxTok-lo+1))
}

// hashPrompt hashes the prompt text (or its id count) with the seed.
func hashPrompt(text string, idCount int, seed int64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return h.Sum64() ^ mix64(uint64(seed)) ^ uint64(idCount)*0x9e3779b97f4a7c15
}

// tokenizeRequest is the body of /tokenize: a prompt, a content string, or chat messages.
type tokenizeRequest struct {
	Prompt   json.RawMessage `json:"prompt"`
	Content  *string         `json:"content"`
	Messages []chatMessage   `json:"messages"`
}

// text returns the text to tokenize.
func (t *tokenizeRequest) text() (string, error) {
	switch {
	case t.Content != nil:
		return *t.Content, nil
	case len(t.Messages) > 0:
		g := genRequest{Messages: t.Messages}
		s, _, err := g.promptText(true)
		return s, err
	}
	s, n, err := parsePrompt(t.Prompt)
	if err == nil && n > 0 {
		return "", errors.New("prompt must be text")
	}
	return s, err
}
