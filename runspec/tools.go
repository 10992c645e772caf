package runspec

import (
	"os"
	"strconv"
	"strings"
	"time"

	"servebench/client/apis"
	"servebench/load"
	"servebench/workload"
)

// Tool calling and agent loops: --tools offers function tools with every chat request
// (--tool-choice auto, required, none or a tool's name), and --agent-steps K runs agent tasks
// of at most K model steps, the tool's latency (--tool-time) waited between them. An agent
// task is a session of K turns: its first turn's user text is the task, each later turn's the
// tool's result (load.Agent says how the history grows).

// toolsAPI is the one API that offers tools.
const toolsAPI = "openai-chat"

// HasTools reports whether the run offers tools.
func (s *Spec) HasTools() bool { return s.Tools != "" }

// Agents reports whether the run is agent tasks.
func (s *Spec) Agents() bool { return s.AgentSteps > 0 }

// MaxAgentSteps bounds --agent-steps (each step sends the whole history again).
const MaxAgentSteps = 64

func (s *Spec) validateTools() error {
	if _, err := s.ToolTimeDist(); err != nil {
		return err
	}
	if f, _ := s.DatasetOf(); f == "agent-trace" && (!s.HasTools() || s.AgentSteps < 2) {
		return Usagef("--dataset agent-trace replays agent tasks: give --tools and --agent-steps K (the most steps kept per task)")
	}
	switch c := s.ToolChoice; {
	case !s.HasTools():
		if c != "" || s.Agents() || s.IsSet("agent-steps") || s.ToolTime != "" {
			return Usagef("--tool-choice, --agent-steps and --tool-time need --tools FILE or --tools builtin:SET")
		}
		return nil
	case strings.TrimSpace(c) != c || strings.ContainsAny(c, "\"\\"):
		return Usagef("--tool-choice %q: want auto, required, none or a tool's name", c)
	}
	if !strings.HasPrefix(s.Tools, "builtin:") {
		if _, err := os.Stat(s.Tools); err != nil {
			return Usagef("--tools: %v", err)
		}
	} else if _, ok := workload.BuiltinTools[strings.TrimPrefix(s.Tools, "builtin:")]; !ok {
		return Usagef("--tools %q: no such built-in set (known: %s)", s.Tools, strings.Join(workload.BuiltinToolSets(), ", "))
	}
	if name, err := apis.Canonical(s.API); s.IsSet("api") && (err != nil || name != toolsAPI) {
		return Usagef("--tools needs --api %s (tools are offered with chat requests), not %s", toolsAPI, s.API)
	}
	if !s.Agents() && !s.IsSet("agent-steps") {
		if s.ToolTime != "" {
			return Usagef("--tool-time needs --agent-steps 2 or more")
		}
		return nil
	}
	switch f, _ := s.DatasetOf(); {
	case s.AgentSteps < 2 || s.AgentSteps > MaxAgentSteps:
		return Usagef("--agent-steps %d: want 2 to %d (one step is a plain request with --tools)", s.AgentSteps, MaxAgentSteps)
	case s.IsSet("turns") || s.ThinkTime != "":
		return Usagef("--agent-steps makes its own turns (model, tool, model …): leave out --turns and --think-time")
	case s.Prompts != "" || s.Trace != "" || s.PrefixGroups > 0 || (s.Dataset != "" && f != "sharegpt" && f != "agent-trace"):
		return Usagef("--agent-steps builds tasks from synthetic turns, --dataset sharegpt or --dataset agent-trace: leave out --prompts, --trace and --prefix-groups")
	case s.Shard != "":
		return Usagef("--agent-steps with --shard is not supported: a task's steps must go from one load generator")
	case s.HasMedia():
		return Usagef("--images and --audio with --agent-steps: not supported")
	}
	return nil
}

// resolveTools picks the chat API for a run with tools when none was given, and makes an
// agent run's steps its sessions' turns.
func (s *Spec) resolveTools() {
	if s.HasTools() && !s.IsSet("api") {
		s.API = toolsAPI
	}
	if s.AgentSteps > 0 {
		s.Turns = s.AgentSteps
	}
	if s.HasTools() && s.ToolChoice == "" {
		s.ToolChoice = "auto"
	}
}

// ToolTimeDist parses --tool-time: a duration (fixed), exp:MEAN or lognormal:MEDIAN,SIGMA.
// Unset, it is no tool time at all.
func (s *Spec) ToolTimeDist() (load.Dist, error) {
	v := s.ToolTime
	bad := Usagef("--tool-time %q: want a duration such as 300ms, exp:300ms (exponential of that mean) or lognormal:300ms,0.5 (median, σ of the log)", v)
	if v == "" {
		return load.Dist{Kind: "fixed"}, nil
	}
	if rest, ok := strings.CutPrefix(v, "lognormal:"); ok {
		med, sig, ok := strings.Cut(rest, ",")
		d, err := time.ParseDuration(med)
		sigma, serr := strconv.ParseFloat(sig, 64)
		if !ok || err != nil || serr != nil || d <= 0 || !(sigma >= 0 && sigma <= 5) {
			return load.Dist{}, bad
		}
		return load.Dist{Kind: "lognormal", D: d, Sigma: sigma}, nil
	}
	kind := "fixed"
	if rest, ok := strings.CutPrefix(v, "exp:"); ok {
		kind, v = "exp", rest
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || (kind == "exp" && d == 0) {
		return load.Dist{}, bad
	}
	return load.Dist{Kind: kind, D: d}, nil
}
