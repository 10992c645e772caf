package capture

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"servebench/client/anthropic"
	"servebench/client/llamacpp"
	"servebench/client/ollama"
	"servebench/client/openai"
	"servebench/client/responses"
)

// apiPaths are the generation endpoints whose requests are recorded, by path, named as --api
// names them. Every other request (models, tokenize, health, metrics) passes through
// unrecorded.
var apiPaths = []struct{ path, api string }{
	{"/v1/chat/completions", openai.APIChat},
	{"/v1/completions", openai.APICompletions},
	{"/v1/responses", responses.API},
	{"/v1/messages", anthropic.API},
	{"/completion", llamacpp.API},
	{"/completions", llamacpp.API},
	{"/api/generate", ollama.APIGenerate},
	{"/api/chat", ollama.APIChat},
}

// apiOf names the API of a request, or "" for one that is not recorded. The path may sit under
// a prefix (a gateway's /openai/v1/chat/completions).
func apiOf(method, path string) string {
	if method != http.MethodPost {
		return ""
	}
	for _, a := range apiPaths {
		if path == a.path || strings.HasSuffix(path, a.path) && strings.HasPrefix(a.path, "/v1/") {
			return a.api
		}
	}
	return ""
}

// prompt is what a request asks the server to read.
type prompt struct {
	text     string // the prompt, or the messages' contents in turn, each ending in a newline
	ids      []int  // the prompt as token ids, when the request sent ids
	messages json.RawMessage
	model    string
	session  string // the body's session or conversation key
}

// requestBody holds the fields of every recorded API that carry the prompt or a session key.
type requestBody struct {
	Model        string          `json:"model"`
	Prompt       json.RawMessage `json:"prompt"`
	Messages     json.RawMessage `json:"messages"`
	System       json.RawMessage `json:"system"`
	Input        json.RawMessage `json:"input"`
	Instructions string          `json:"instructions"`
	SessionID    string          `json:"session_id"`
	User         string          `json:"user"`
	Conversation json.RawMessage `json:"conversation"`
	Metadata     struct {
		SessionID string `json:"session_id"`
		UserID    string `json:"user_id"`
	} `json:"metadata"`
}

// parsePrompt reads a request body. A body that is not JSON gives ok false.
func parsePrompt(body []byte) (p prompt, ok bool) {
	var b requestBody
	if json.Unmarshal(body, &b) != nil {
		return p, false
	}
	p.model = b.Model
	var t strings.Builder
	add := func(s string) {
		if s != "" {
			t.WriteString(s)
			t.WriteByte('\n')
		}
	}
	add(contentText(b.System))
	add(b.Instructions)
	switch {
	case len(b.Prompt) > 0 && b.Prompt[0] == '"':
		var s string
		_ = json.Unmarshal(b.Prompt, &s)
		p.text = s // a plain prompt is sent as it is: no newline added
		return withSession(p, &b), true
	case len(b.Prompt) > 0 && b.Prompt[0] == '[':
		var ids []int
		var ss []string
		if json.Unmarshal(b.Prompt, &ids) == nil {
			p.ids = ids
		} else if json.Unmarshal(b.Prompt, &ss) == nil && len(ss) > 0 {
			p.text = ss[0] // a batch: its first prompt stands for it
		}
		return withSession(p, &b), true
	}
	for _, msgs := range []json.RawMessage{b.Messages, b.Input} {
		if len(msgs) > 0 && msgs[0] == '"' {
			var s string
			_ = json.Unmarshal(msgs, &s)
			add(s)
			continue
		}
		var list []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(msgs, &list) == nil && len(list) > 0 {
			p.messages = msgs
			for _, m := range list {
				add(contentText(m.Content))
			}
		}
	}
	p.text = t.String()
	return withSession(p, &b), true
}

// withSession sets the body's session key: a session or conversation id, else the user.
func withSession(p prompt, b *requestBody) prompt {
	var conv struct {
		ID string `json:"id"`
	}
	conversation := ""
	if len(b.Conversation) > 0 && b.Conversation[0] == '"' {
		_ = json.Unmarshal(b.Conversation, &conversation)
	} else if json.Unmarshal(b.Conversation, &conv) == nil {
		conversation = conv.ID
	}
	for _, k := range []string{b.SessionID, b.Metadata.SessionID, conversation, b.User, b.Metadata.UserID} {
		if k != "" {
			p.session = k
			break
		}
	}
	return p
}

// contentText is a message content's text: a string, or its text parts in turn.
func contentText(c json.RawMessage) string {
	if len(c) == 0 {
		return ""
	}
	if c[0] == '"' {
		var s string
		_ = json.Unmarshal(c, &s)
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(c, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// usage is what an answer says it counted; nil where it said nothing.
type usage struct {
	input, output, cached *int
	text                  strings.Builder // the generated text, to count where no usage came
	events                int             // events that carried generated text
}

// usageFields are the usage fields of every recorded API.
type usageFields struct {
	PromptTokens        *int `json:"prompt_tokens"`
	CompletionTokens    *int `json:"completion_tokens"`
	InputTokens         *int `json:"input_tokens"`
	OutputTokens        *int `json:"output_tokens"`
	CacheRead           *int `json:"cache_read_input_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	InputTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

// event is one JSON object of an answer (a whole body, an SSE event or an NDJSON line).
type event struct {
	Usage   *usageFields `json:"usage"`
	Choices []struct {
		Text    string `json:"text"`
		Delta   struct{ Content string }
		Message struct{ Content string }
	} `json:"choices"`
	Message  json.RawMessage `json:"message"`  // Anthropic's message_start; Ollama chat's message
	Response json.RawMessage `json:"response"` // Ollama's text; the Responses API's response
	Content  json.RawMessage `json:"content"`  // llama.cpp's text
	Delta    json.RawMessage `json:"delta"`    // Anthropic's {text}; the Responses API's text
	// llama.cpp's and Ollama's own counts
	TokensEvaluated *int `json:"tokens_evaluated"`
	TokensPredicted *int `json:"tokens_predicted"`
	TokensCached    *int `json:"tokens_cached"`
	PromptEvalCount *int `json:"prompt_eval_count"`
	EvalCount       *int `json:"eval_count"`
}

// set keeps the last count an answer gave: Ollama's OpenAI API zero-fills usage on every
// chunk and gives the real one last; Anthropic's output count grows to its final value.
func set(dst **int, v *int) {
	if v != nil {
		*dst = v
	}
}

func (u *usage) fields(f *usageFields) {
	if f == nil {
		return
	}
	set(&u.input, f.PromptTokens)
	set(&u.input, f.InputTokens)
	set(&u.output, f.CompletionTokens)
	set(&u.output, f.OutputTokens)
	set(&u.cached, f.CacheRead)
	if f.PromptTokensDetails != nil {
		set(&u.cached, f.PromptTokensDetails.CachedTokens)
	}
	if f.InputTokensDetails != nil {
		set(&u.cached, f.InputTokensDetails.CachedTokens)
	}
}

// add reads one event.
func (u *usage) add(b []byte) {
	var e event
	if json.Unmarshal(b, &e) != nil {
		return
	}
	u.fields(e.Usage)
	set(&u.input, e.TokensEvaluated)
	set(&u.output, e.TokensPredicted)
	set(&u.cached, e.TokensCached)
	set(&u.input, e.PromptEvalCount)
	set(&u.output, e.EvalCount)
	text := ""
	for _, c := range e.Choices {
		text += c.Text + c.Delta.Content + c.Message.Content
	}
	var nested struct {
		Usage   *usageFields `json:"usage"`
		Content json.RawMessage
		Text    string `json:"text"`
	}
	for _, raw := range []json.RawMessage{e.Message, e.Response, e.Delta, e.Content} {
		switch {
		case len(raw) > 0 && raw[0] == '"':
			var s string
			_ = json.Unmarshal(raw, &s)
			text += s
		case len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &nested) == nil:
			u.fields(nested.Usage)
			text += nested.Text
			if len(nested.Content) > 0 && nested.Content[0] == '"' {
				text += contentText(nested.Content)
			}
			nested.Usage, nested.Content, nested.Text = nil, nil, ""
		}
	}
	if text != "" {
		u.text.WriteString(text)
		u.events++
	}
}

// parseAnswer reads a whole answer: an SSE stream (its data lines), NDJSON (Ollama) or one
// JSON body.
func parseAnswer(body []byte) *usage {
	u := &usage{}
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		u.add(t)
		return u
	}
	for line := range bytes.Lines(body) {
		line = bytes.TrimSpace(line)
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			line = bytes.TrimSpace(d)
		}
		if len(line) > 0 && line[0] == '{' {
			u.add(line)
		}
	}
	return u
}
