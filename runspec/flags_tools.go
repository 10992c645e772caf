package runspec

import (
	"strings"

	"github.com/spf13/pflag"

	"servebench/workload"
)

// bindToolsFlags registers the tool-calling and agent-loop flags (runspec/tools.go).
func bindToolsFlags(fs *pflag.FlagSet, s *Spec) {
	fs.StringVar(&s.Tools, "tools", s.Tools, "offer function tools with every chat request: an OpenAI tools JSON file, or builtin:SET ("+strings.Join(workload.BuiltinToolSets(), ", ")+"); each streamed tool call is checked against its tool's parameters schema")
	fs.StringVar(&s.ToolChoice, "tool-choice", s.ToolChoice, "with --tools: auto (default), required, none, or a tool's name to force that function")
	fs.IntVar(&s.AgentSteps, "agent-steps", s.AgentSteps, "with --tools: run agent tasks of at most K model steps (model → tool → model …): a tool call is answered, after --tool-time, with the tool's result and the growing history; a task ends when the model answers without a tool call or at K. --requests, --warmup and --concurrency count tasks")
	fs.StringVar(&s.ToolTime, "tool-time", s.ToolTime, "agent tasks: the tool's latency before each next step: fixed (300ms), exp:300ms (exponential of that mean) or lognormal:300ms,0.5 (median, σ of the log); seeded")
}
