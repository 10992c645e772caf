package record

import (
	"bytes"
	"encoding/json"
)

// ToolCall is one function call a model streamed as delta.tool_calls: its name and id, how
// many argument pieces it came in and their length, and whether the whole arguments string
// parsed as JSON matching the tool's parameters schema (Invalid says why not; "" is valid).
// ArgTokens counts the deltas that carried argument text, one token each (the "count"
// source of docs/design/METRICS.md): vLLM, SGLang and llama.cpp stream one token of arguments per delta.
type ToolCall struct {
	Name      string `json:"name"`
	ID        string `json:"id,omitempty"`
	ArgTokens int    `json:"arg_tokens"`
	ArgBytes  int    `json:"arg_bytes"`
	Invalid   string `json:"invalid,omitempty"`
}

// Agent reports whether the record is a step of an agent task.
func (r *Record) Agent() bool { return r.Task > 0 }

// appendTools appends the tool-call and agent fields of r, in Record's field order, each left
// out when empty (the calls take encoding/json's path: they are rare and hold free text).
func appendTools(b []byte, r *Record, scratch *bytes.Buffer, enc *json.Encoder) ([]byte, error) {
	b = appendIntField(b, `,"task":`, int64(r.Task), true)
	b = appendIntField(b, `,"step":`, int64(r.Step), true)
	b = appendIntField(b, `,"tool_time":`, r.ToolTime, true)
	b = appendIntField(b, `,"first_tool_call":`, r.FirstToolCall, true)
	if len(r.ToolCalls) == 0 {
		return b, nil
	}
	scratch.Reset()
	if err := enc.Encode(r.ToolCalls); err != nil {
		return b, err
	}
	b = append(b, `,"tool_calls":`...)
	return append(b, bytes.TrimRight(scratch.Bytes(), "\n")...), nil
}

// toolCalls decodes the tool_calls array with encoding/json.
func (s *scanner) toolCalls(r *Record) bool {
	start, ok := s.Value()
	if !ok {
		return false
	}
	raw := s.B[start:s.I]
	if string(raw) == "null" {
		return false // encoding/json's rule for null, as for events and server
	}
	return json.Unmarshal(raw, &r.ToolCalls) == nil
}
