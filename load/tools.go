package load

import (
	"encoding/json"
	"fmt"
	"strings"

	"servebench/client"
	"servebench/record"
	"servebench/schema"
	"servebench/workload"
)

// toolState is what a request's stamp keeps of the tool calls the model streamed: each call's
// pieces joined by its index, in the order the calls began.
type toolState struct {
	calls []*callAcc
}

// callAcc is one call being streamed.
type callAcc struct {
	index     int
	id, name  string
	args      strings.Builder
	argTokens int
}

var _ client.ToolCallObserver = (*stamp)(nil)

// ToolCallDelta implements client.ToolCallObserver: it stamps the first tool-call piece (the
// time to first tool call is measured from it) and adds the piece to its call.
func (s *stamp) ToolCallDelta(index int, id, name, args string) {
	if s.rec.FirstToolCall == 0 {
		s.rec.FirstToolCall = s.lastEvent
	}
	var c *callAcc
	for _, x := range s.tools.calls {
		if x.index == index {
			c = x
		}
	}
	if c == nil {
		c = &callAcc{index: index}
		s.tools.calls = append(s.tools.calls, c)
	}
	if c.id == "" {
		c.id = id
	}
	c.name += name // OpenAI's streaming rule: string fields of a delta are appended
	if args != "" {
		c.args.WriteString(args)
		c.argTokens++
	}
}

// finish writes the calls into r, each checked against its tool's parameters schema; with no
// schemas (no tools were offered) a call is checked for JSON only.
func (ts *toolState) finish(r *record.Record, schemas map[string]*schema.Schema) {
	for _, c := range ts.calls {
		tc := record.ToolCall{Name: c.name, ID: c.id, ArgTokens: c.argTokens, ArgBytes: c.args.Len()}
		tc.Invalid = checkArgs(c.name, c.args.String(), schemas)
		r.ToolCalls = append(r.ToolCalls, tc)
	}
}

// checkArgs says why args is not a valid call of the tool name ("" when it is).
func checkArgs(name, args string, schemas map[string]*schema.Schema) string {
	if schemas == nil {
		if !json.Valid([]byte(args)) {
			return "not JSON"
		}
		return ""
	}
	sc, ok := schemas[name]
	switch {
	case !ok:
		return fmt.Sprintf("no tool named %q was offered", name)
	case sc == nil:
		if !json.Valid([]byte(args)) {
			return "not JSON"
		}
		return ""
	}
	if err := sc.Validate([]byte(args)); err != nil {
		return err.Error()
	}
	return ""
}

// history is the calls as an assistant message's tool_calls, for an agent's next step. A
// call the server gave no id gets one of its own (call_STEP_INDEX), so the tool result can
// name it.
func (ts *toolState) history(step int) []workload.ToolCall {
	out := make([]workload.ToolCall, 0, len(ts.calls))
	for _, c := range ts.calls {
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", step, c.index)
		}
		out = append(out, workload.ToolCall{ID: id, Type: "function",
			Function: workload.FunctionCall{Name: c.name, Arguments: c.args.String()}})
	}
	return out
}
