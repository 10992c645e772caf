package openai

import (
	"encoding/json"

	"servebench/client"
)

// Tool calling on the chat API: the request offers "tools" with a "tool_choice", and the
// answer streams each call in pieces as delta.tool_calls entries. vLLM, SGLang and llama.cpp
// send the same shape: the first piece of a call holds its index, id, type and
// function.name (llama.cpp adds "arguments": ""), each later one its index and a fragment of
// function.arguments, which joined make the arguments' JSON text.

// putTools adds the tools and tool_choice of req to a chat body m.
func putTools(m map[string]any, req *client.Request, chat bool) {
	t := req.Tools

	if !chat || t == nil || len(t.List) == 0 {
		return
	}
	m["tools"] = t.List
	switch t.Choice {
	case "":
	case "auto", "required", "none":
		m["tool_choice"] = t.Choice
	default: // a tool's name: force that function
		m["tool_choice"] = map[string]any{"type": "function", "function": map[string]string{"name": t.Choice}}
	}
}

// toolCalls is a delta's tool_calls value: whether it holds any call (an empty array or null
// does not), and its bytes when it does, decoded only for an Observer that wants the pieces.
type toolCalls struct {
	any list
	raw []byte
}

// set keeps b, the value's bytes.
func (t *toolCalls) set(b []byte) {
	t.any = listOf(b)
	if t.any {
		t.raw = append(t.raw[:0], b...)
	}
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *toolCalls) UnmarshalJSON(b []byte) error {
	t.set(b)
	return nil
}

// wireToolCall is one entry of delta.tool_calls.
type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// reportToolCalls passes the tool-call pieces of the chunk d.c to a ToolCallObserver. An entry
// without an index is placed by its position (an OpenAI-compatible server that sends whole
// calls in one chunk may leave it out). A value that is not a list of calls reports nothing:
// the event still counts as content.
func (d *decoder) reportToolCalls(o client.Observer) {
	if _, ok := o.(client.ToolCallObserver); !ok {
		return
	}
	for i := range d.c.Choices {
		tc := &d.c.Choices[i].Delta.ToolCalls
		if !tc.any {
			continue
		}
		var calls []wireToolCall
		if json.Unmarshal(tc.raw, &calls) != nil {
			continue
		}
		for k, c := range calls {
			idx := k
			if c.Index != nil {
				idx = *c.Index
			}
			client.ReportToolCall(o, idx, c.ID, c.Function.Name, c.Function.Arguments)
		}
	}
}
