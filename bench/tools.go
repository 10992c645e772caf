package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"servebench/client"
	"servebench/load"
	"servebench/runspec"
	"servebench/schema"
	"servebench/workload"
)

// toolSet is the run's offered tools: as sent, and each one's compiled parameters schema.
type toolSet struct {
	wire    *client.Tools
	schemas map[string]*schema.Schema
	agent   *load.Agent
}

// loadTools reads --tools (a file or a built-in set), compiles each tool's parameters schema
// and checks --tool-choice names one of them: all before any request, as usage errors.
func (b *Session) loadTools(context.Context) error {
	s := &b.spec
	if !s.HasTools() {
		return nil
	}
	var raw []byte
	if name, ok := strings.CutPrefix(s.Tools, "builtin:"); ok {
		raw = []byte(workload.BuiltinTools[name]) // validated
	} else {
		var err error
		if raw, err = os.ReadFile(s.Tools); err != nil {
			return runspec.Usagef("--tools: %v", err)
		}
	}
	tools, err := workload.ParseTools(raw)
	if err != nil {
		return runspec.Usagef("--tools %s: %v", s.Tools, err)
	}
	ts := &toolSet{schemas: map[string]*schema.Schema{}}
	found := false
	for _, t := range tools {
		found = found || t.Name == s.ToolChoice
		var sc *schema.Schema
		if len(t.Parameters) > 0 {
			if sc, err = schema.Compile(t.Name, t.Parameters); err != nil {
				return runspec.Usagef("--tools %s: tool %s: %v", s.Tools, t.Name, err)
			}
		}
		ts.schemas[t.Name] = sc
	}
	switch s.ToolChoice {
	case "auto", "required", "none":
	default:
		if !found {
			return runspec.Usagef("--tool-choice %q: want auto, required, none or the name of one of the tools", s.ToolChoice)
		}
	}
	var compact json.RawMessage
	if compact, err = json.Marshal(json.RawMessage(raw)); err != nil {
		return fmt.Errorf("--tools: %v", err)
	}
	ts.wire = &client.Tools{List: compact, Choice: s.ToolChoice}
	if s.Agents() {
		d, _ := s.ToolTimeDist() // validated
		ts.agent = &load.Agent{ToolTime: d}
	}
	b.tools = ts
	return nil
}

// withTools offers the run's tools with r's requests and checks the calls against them.
func (b *Session) withTools(r *load.Runner) {
	if b.tools == nil {
		return
	}
	r.Template.Tools = b.tools.wire
	r.ToolSchemas = b.tools.schemas
	r.Agent = b.tools.agent
}
