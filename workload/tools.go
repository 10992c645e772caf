package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Tool is one function tool a chat request offers: its name and its parameters' JSON Schema
// (nil when the tool takes none).
type Tool struct {
	Name       string
	Parameters json.RawMessage
}

// ParseTools reads an OpenAI "tools" array ([{"type": "function", "function": {"name",
// "description", "parameters"}}]) and returns its tools. Names must be unique.
func ParseTools(raw []byte) ([]Tool, error) {
	var list []struct {
		Type     string `json:"type"`
		Function *struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("not a JSON array of tools: %v", err)
	}
	if len(list) == 0 {
		return nil, errors.New("no tools in the array")
	}
	seen := map[string]bool{}
	out := make([]Tool, 0, len(list))
	for i, t := range list {
		if t.Type != "function" || t.Function == nil || t.Function.Name == "" {
			return nil, fmt.Errorf("tools[%d]: want {\"type\": \"function\", \"function\": {\"name\": ..., \"parameters\": {...}}}", i)
		}
		if seen[t.Function.Name] {
			return nil, fmt.Errorf("tools[%d]: the name %q is given twice", i, t.Function.Name)
		}
		seen[t.Function.Name] = true
		p := t.Function.Parameters
		if string(p) == "null" {
			p = nil
		}
		out = append(out, Tool{Name: t.Function.Name, Parameters: p})
	}
	return out, nil
}

// BuiltinToolSets names the built-in tool sets (--tools builtin:NAME).
func BuiltinToolSets() []string { return slices.Sorted(maps.Keys(BuiltinTools)) }

// BuiltinTools are a few realistic tool sets, each an OpenAI tools array with JSON-Schema
// parameters (required properties, enums, integer bounds), so that a tool-calling run needs no
// file of its own.
var BuiltinTools = map[string]string{
	"weather": `[
 {"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city",
  "parameters": {"type": "object", "properties": {
   "city": {"type": "string", "description": "City name, e.g. Paris"},
   "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
   "required": ["city"], "additionalProperties": false}}},
 {"type": "function", "function": {"name": "get_forecast", "description": "Daily forecast for the next days",
  "parameters": {"type": "object", "properties": {
   "city": {"type": "string"},
   "days": {"type": "integer", "minimum": 1, "maximum": 14}},
   "required": ["city", "days"], "additionalProperties": false}}}
]`,
	"agent": `[
 {"type": "function", "function": {"name": "web_search", "description": "Search the web",
  "parameters": {"type": "object", "properties": {
   "query": {"type": "string", "minLength": 1},
   "max_results": {"type": "integer", "minimum": 1, "maximum": 100}},
   "required": ["query"], "additionalProperties": false}}},
 {"type": "function", "function": {"name": "read_file", "description": "Read a file of the workspace",
  "parameters": {"type": "object", "properties": {
   "path": {"type": "string"},
   "max_bytes": {"type": "integer", "minimum": 1}},
   "required": ["path"], "additionalProperties": false}}},
 {"type": "function", "function": {"name": "run_command", "description": "Run a shell command in the sandbox",
  "parameters": {"type": "object", "properties": {
   "command": {"type": "string"},
   "timeout_s": {"type": "number", "minimum": 0},
   "background": {"type": "boolean"}},
   "required": ["command"], "additionalProperties": false}}}
]`,
}
