package sim

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Tool calling. A chat request that offers "tools" is answered with a streamed function call
// (delta.tool_calls, vLLM's shape) when its tool_choice asks for one ("required", a named
// function) or, with "auto" (the default), for a seeded CallRate share of prompts; "none"
// never calls. The call's arguments are built from the tool's own parameters schema (every
// property, values drawn from the output words), so they are valid; a seeded CallInvalid
// share of calls breaks the schema on purpose (a required property left out, else a property
// of the wrong type, else JSON cut short), so that a client's schema check can be tested
// against truth. The arguments' text is spread over the output tokens: the first token
// carries the function's name, each later one a piece of the arguments.

// Tools are the tool-calling settings.
type Tools struct {
	CallRate    float64 // share of tool_choice "auto" answers that are tool calls
	CallInvalid float64 // share of tool calls whose arguments break the schema
}

func bindToolFlags(fs *flag.FlagSet, c *Config) {
	fs.Float64Var(&c.Tools.CallRate, "tool-call-rate", c.Tools.CallRate, `share of chat requests offering tools with tool_choice "auto" that are answered with a tool call (seeded by the prompt)`)
	fs.Float64Var(&c.Tools.CallInvalid, "tool-call-invalid", c.Tools.CallInvalid, "share of tool calls whose arguments break the tool's parameters schema (seeded by the prompt)")
}

func (c *Config) validateTools() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"--tool-call-rate", c.Tools.CallRate}, {"--tool-call-invalid", c.Tools.CallInvalid}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return fmt.Errorf("%s %g: want a share in [0, 1]", f.name, f.v)
		}
	}
	return nil
}

// simTool is one offered function: its name and parameters schema.
type simTool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// plannedCall is the tool call a stream will send.
type plannedCall struct {
	name string
	args string // the whole arguments text, padded to at least one byte per token
}

// Seeds of the draws made from a prompt's hash, apart from its words and length.
const (
	toolCallSalt    = 0x746f6f6c63616c6c
	toolPickSalt    = 0x746f6f6c7069636b
	toolInvalidSalt = 0x696e76616c696421
)

// unit draws a uniform [0, 1) from h and a salt.
func unit(h, salt uint64) float64 { return float64(mix64(h^salt)>>11) / (1 << 53) }

// parseTools checks the request's tools and tool_choice (400 when malformed).
func (r *genRequest) parseTools() ([]simTool, string, error) {
	if len(r.Tools) == 0 || string(r.Tools) == "null" {
		return nil, "", nil
	}
	var tools []simTool
	if err := json.Unmarshal(r.Tools, &tools); err != nil {
		return nil, "", fmt.Errorf("tools: %v", err)
	}
	for i, t := range tools {
		if t.Type != "function" || t.Function.Name == "" {
			return nil, "", fmt.Errorf("tools[%d]: want {\"type\": \"function\", \"function\": {\"name\": ...}}", i)
		}
	}
	choice := "auto"
	if len(r.ToolChoice) > 0 && string(r.ToolChoice) != "null" {
		var s string
		var named struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(r.ToolChoice, &s) == nil && (s == "auto" || s == "required" || s == "none"):
			choice = s
		case json.Unmarshal(r.ToolChoice, &named) == nil && named.Function.Name != "":
			choice = "=" + named.Function.Name
			if !slices.ContainsFunc(tools, func(t simTool) bool { return t.Function.Name == named.Function.Name }) {
				return nil, "", fmt.Errorf("tool_choice names %q, which is not among the tools", named.Function.Name)
			}
		default:
			return nil, "", errors.New(`tool_choice: want "auto", "required", "none" or {"type": "function", "function": {"name": ...}}`)
		}
	}
	return tools, choice, nil
}

// planToolCall decides whether the chat request p is answered with a tool call, and builds it.
func (s *Server) planToolCall(p *genParams) *plannedCall {
	tools, choice := p.tools, p.toolChoice
	if len(tools) == 0 || choice == "none" {
		return nil
	}
	h := p.textSeed
	if choice == "auto" && unit(h, toolCallSalt) >= s.cfg.Tools.CallRate {
		return nil
	}
	t := tools[int(mix64(h^toolPickSalt)%uint64(len(tools)))]
	if name, ok := strings.CutPrefix(choice, "="); ok {
		for _, x := range tools {
			if x.Function.Name == name {
				t = x
			}
		}
	}
	var schema map[string]any
	_ = json.Unmarshal(t.Function.Parameters, &schema) // none or not an object: "{}"
	g := argGen{seed: h, words: max(p.target-1, 1)}
	v := g.value(schema)
	if _, ok := v.(map[string]any); !ok {
		v = map[string]any{}
	}
	obj := v.(map[string]any)
	invalid := unit(h, toolInvalidSalt) < s.cfg.Tools.CallInvalid
	broken := invalid && breakArgs(obj, schema)
	b, _ := json.Marshal(obj)
	args := string(b)
	if invalid && !broken {
		args = args[:len(args)-1] // no property to break: cut the closing brace
	}
	if pad := p.target - 1 - len(args); pad > 0 {
		args += strings.Repeat(" ", pad) // whitespace after the value is still the same JSON
	}
	return &plannedCall{name: t.Function.Name, args: args}
}

// argGen draws argument values: the first string gets the output's words, later ones one word.
type argGen struct {
	seed  uint64
	words int
	n     int // words drawn so far
}

func (g *argGen) word() string {
	w := strings.TrimSpace(outputPieces[outputWord(g.seed, g.n)])
	g.n++
	return w
}

// value is a value that meets schema, as far as its type, enum, properties and items say.
func (g *argGen) value(schema map[string]any) any {
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[int(mix64(g.seed+uint64(g.n))%uint64(len(e)))]
	}
	typ, _ := schema["type"].(string)
	if typ == "" {
		if _, ok := schema["properties"]; ok {
			typ = "object"
		}
	}
	switch typ {
	case "object":
		props, _ := schema["properties"].(map[string]any)
		out := map[string]any{}
		for _, k := range slices.Sorted(mapKeys(props)) {
			sub, _ := props[k].(map[string]any)
			out[k] = g.value(sub)
		}
		return out
	case "array":
		items, _ := schema["items"].(map[string]any)
		return []any{g.value(items)}
	case "integer":
		lo, hi := 1.0, 100.0
		if v, ok := schema["minimum"].(float64); ok {
			lo = math.Ceil(v)
		}
		if v, ok := schema["maximum"].(float64); ok {
			hi = math.Floor(v)
		} else {
			hi = lo + 99
		}
		if hi < lo {
			return int(lo)
		}
		return int(lo) + int(mix64(g.seed+uint64(g.n))%uint64(hi-lo+1))
	case "number":
		v := float64(mix64(g.seed+uint64(g.n))%1000) / 10
		if lo, ok := schema["minimum"].(float64); ok && v < lo {
			v = lo
		}
		if hi, ok := schema["maximum"].(float64); ok && v > hi {
			v = hi
		}
		return v
	case "boolean":
		return mix64(g.seed+uint64(g.n))%2 == 0
	case "null":
		return nil
	}
	n := 1
	if g.words > 0 {
		n, g.words = g.words, 0
	}
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.word()
	}
	return strings.Join(ws, " ")
}

// breakArgs makes obj break schema: a required property left out, else a property given the
// wrong type; false when the schema has neither (the caller then cuts the JSON short).
func breakArgs(obj map[string]any, schema map[string]any) bool {
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if k, ok := r.(string); ok {
				if _, has := obj[k]; has {
					delete(obj, k)
					return true
				}
			}
		}
	}
	props, _ := schema["properties"].(map[string]any)
	for _, k := range slices.Sorted(mapKeys(props)) {
		sub, _ := props[k].(map[string]any)
		switch t, _ := sub["type"].(string); t {
		case "string":
			obj[k] = 12345
			return true
		case "integer", "number", "boolean", "object", "array":
			obj[k] = "not a " + t
			return true
		}
	}
	return false
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// appendPlannedCall appends a tool-call chunk of the planned call up to its delta's end:
// token 0 opens the call (id, type, name), token i ≥ 1 adds the i-th of target−1 equal
// pieces of the arguments text (a one-token answer sends the whole call at once).
func (st *streamer) appendPlannedCall(b []byte) []byte {
	c := st.tool
	b = append(b, `"choices":[{"index":0,"delta":{"tool_calls":[{`...)
	if st.textFrom == 0 {
		b = append(b, `"id":"`...)
		b = append(b, st.toolID...)
		b = append(b, `","type":"function","index":0,"function":{"name":`...)
		b = appendJSONString(b, c.name)
	} else {
		b = append(b, `"index":0,"function":{`...)
	}
	n := max(st.q.target-1, 1)
	from, to := max(st.textFrom-1, 0), st.written-1
	if st.q.target == 1 {
		from, to = 0, 1
	}
	piece := c.args[from*len(c.args)/n : to*len(c.args)/n]
	if piece != "" {
		if st.textFrom == 0 {
			b = append(b, ',')
		}
		b = append(b, `"arguments":`...)
		b = appendJSONString(b, piece)
	}
	return append(b, `}}]}`...)
}
