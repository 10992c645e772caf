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

// agentTraceWorkload builds part r of an agent-trace replay: the trace's tasks (cycled to the
// part's size, each with text of its own) as sessions whose turns are the steps, each later
// step carrying the trace's tool time.
func (b *Session) agentTraceWorkload(ctx context.Context, tok workload.Tokenizer, chat bool, r int, path string) (part, bool, error) {
	s := &b.spec
	in, err := b.openPart(ctx, "--dataset", path, r)
	if err != nil {
		return part{}, false, err
	}
	defer in.Close()
	if r == 0 {
		b.ds = &dataset{}
	}
	tasks, err := workload.ReadAgentTasks(in, path)
	if err != nil {
		return part{}, false, b.inputErr("--dataset", err)
	}
	if r == 0 {
		if err := b.identify(in, "agent-trace"); err != nil {
			return part{}, false, err
		}
	}
	at := workload.AgentTrace{Count: b.plan.size(), MaxSteps: s.AgentSteps, Seed: seedFor(s.Seed, r), Nonce: b.nonce}
	sessions, tools, exact, err := at.Sessions(ctx, tasks, tok)
	if err != nil {
		return part{}, false, b.inputErr("--dataset", err)
	}
	reqs, err := workload.SessionRequests(ctx, sessions, chat, tok)
	if err != nil {
		return part{}, false, fmt.Errorf("build agent tasks: %s", s.Redact(err.Error()))
	}
	for i := range reqs { // Session and Turn count from 1
		reqs[i].ToolTime = tools[reqs[i].Session-1][reqs[i].Turn-1]
	}
	if r == 0 {
		b.ds.sessions = len(sessions)
	}
	return part{reqs: reqs, warm: min(b.plan.warm, len(sessions)), sessions: len(sessions)}, exact && !chat, nil
}
