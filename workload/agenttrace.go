package workload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// AgentTrace reads an agent trace: a JSONL file of model steps, one per line, grouped into
// tasks, replayed by an agent run (run --dataset agent-trace:FILE --agent-steps K). A line:
//
//		{"task": "t1", "step": 2, "parent": 1, "input_tokens": 300, "output_tokens": 40, "tool_time_ms": 850}
//
//	  - task (string or number): the task the step belongs to; AIPerf's and Dynamo's agent
//	    traces call it session_id, which is read too. Lines of a task need not be adjacent.
//	  - step: its place in the task, from 1 (absent: the order of the task's lines).
//	  - parent: the step it follows (absent or the previous step: a chain). A step whose parent
//	    is not the previous one (a branching agent graph, as inference-perf's OpenTelemetry
//	    traces of sub-agents hold) is refused: the replay runs one chain per task.
//	  - input_tokens: the tokens the step adds to the conversation (step 1: the task's prompt;
//	    a later step: the tool's result). Traces that give the whole prompt instead, AIPerf's
//	    input_length, are read as that, less the history the replay already sends (the previous
//	    step's input and output lengths), at least 1.
//	  - output_tokens (or output_length): the step's max_tokens.
//	  - tool_time_ms (or AIPerf's delay, ms, "applied after the previous turn completes"): the
//	    tool's latency before this step; absent, the run's --tool-time is drawn.
//
// Text is generated (seeded) at the given lengths: a trace carries lengths and times, not text.
type AgentTrace struct {
	Count    int    // tasks to build: the trace's tasks in order, cycled, each with text of its own
	MaxSteps int    // steps kept per task
	Seed     int64  //
	Nonce    uint64 // as Synthetic.Nonce
}

// AgentTask is one task of a trace: its steps' added input and output lengths and tool times.
type AgentTask struct {
	ID              string
	Inputs, Outputs []int
	ToolTimes       []time.Duration // 0: draw --tool-time
}

type agentRow struct {
	Task         json.RawMessage `json:"task"`
	SessionID    json.RawMessage `json:"session_id"`
	Step         int             `json:"step"`
	Parent       *int            `json:"parent"`
	InputTokens  *int            `json:"input_tokens"`
	InputLength  *int            `json:"input_length"`
	OutputTokens *int            `json:"output_tokens"`
	OutputLength *int            `json:"output_length"`
	ToolTimeMS   *float64        `json:"tool_time_ms"`
	Delay        *float64        `json:"delay"`
}

// ReadAgentTasks parses the trace in r (name labels errors) into its tasks, in the order
// their first lines come.
func ReadAgentTasks(r io.Reader, name string) ([]AgentTask, error) {
	type step struct {
		n, parent           int
		in, out             int
		whole               bool
		tool                time.Duration
		hasParent, hasIndex bool
	}
	byTask := map[string][]step{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for ln := 1; sc.Scan(); ln++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var row agentRow
		if err := json.Unmarshal(line, &row); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, ln, err)
		}
		id := string(bytes.Trim(row.Task, `"`))
		if len(row.Task) == 0 {
			id = string(bytes.Trim(row.SessionID, `"`))
		}
		if id == "" || id == "null" {
			return nil, fmt.Errorf("%s:%d: no task (or session_id)", name, ln)
		}
		st := step{n: row.Step, hasIndex: row.Step != 0}
		if row.Parent != nil {
			st.parent, st.hasParent = *row.Parent, true
		}
		switch {
		case row.InputTokens != nil:
			st.in = *row.InputTokens
		case row.InputLength != nil:
			st.in, st.whole = *row.InputLength, true
		default:
			return nil, fmt.Errorf("%s:%d: no input_tokens (or input_length)", name, ln)
		}
		switch {
		case row.OutputTokens != nil:
			st.out = *row.OutputTokens
		case row.OutputLength != nil:
			st.out = *row.OutputLength
		default:
			return nil, fmt.Errorf("%s:%d: no output_tokens (or output_length)", name, ln)
		}
		ms := row.ToolTimeMS
		if ms == nil {
			ms = row.Delay
		}
		if ms != nil {
			if !(*ms >= 0) || *ms > 1e9 || math.IsInf(*ms, 0) {
				return nil, fmt.Errorf("%s:%d: tool time %v ms: want 0 to 1e9", name, ln, *ms)
			}
			st.tool = time.Duration(*ms * float64(time.Millisecond))
		}
		if st.in < 1 || st.out < 1 || st.in > 1<<24 || st.out > 1<<24 || st.n < 0 {
			return nil, fmt.Errorf("%s:%d: input and output lengths must be 1 to %d, step at least 1", name, ln, 1<<24)
		}
		if _, ok := byTask[id]; !ok {
			order = append(order, id)
		}
		if !st.hasIndex {
			st.n = len(byTask[id]) + 1
		}
		byTask[id] = append(byTask[id], st)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s: no steps", name)
	}
	out := make([]AgentTask, 0, len(order))
	for _, id := range order {
		steps := byTask[id]
		slices.SortStableFunc(steps, func(a, b step) int { return a.n - b.n })
		t := AgentTask{ID: id}
		for k, s := range steps {
			if s.n != k+1 {
				return nil, fmt.Errorf("%s: task %s: steps %d and %d: want steps 1, 2, 3 … without gaps or repeats", name, id, k, s.n)
			}
			if s.hasParent && s.parent != k && !(k == 0 && s.parent == 0) {
				return nil, fmt.Errorf("%s: task %s: step %d follows step %d, not step %d: branching agent graphs are not replayed (one chain per task)", name, id, s.n, s.parent, k)
			}
			in := s.in
			if s.whole && k > 0 { // AIPerf's input_length: the whole prompt, history included
				in = max(1, s.in-steps[k-1].in-steps[k-1].out)
			}
			t.Inputs, t.Outputs, t.ToolTimes = append(t.Inputs, in), append(t.Outputs, s.out), append(t.ToolTimes, s.tool)
		}
		out = append(out, t)
	}
	return out, nil
}

// Sessions builds Count sessions from tasks: session i replays task i mod len(tasks) (its first
// MaxSteps steps) with text of its own, seeded by (Seed, i); each turn's user text is the
// step's added input (the task's prompt, then each tool result) and its answer text the
// step's output length in words. toolTimes[i][k] is step k's tool time.
func (a *AgentTrace) Sessions(ctx context.Context, tasks []AgentTask, tok Tokenizer) (sessions []Session, toolTimes [][]time.Duration, exact bool, err error) {
	if a.Count < 1 || a.MaxSteps < 1 || len(tasks) == 0 {
		return nil, nil, false, errors.New("agent trace: want at least one task, session and step")
	}
	b := &builder{tok: tok, ratio: 1}
	exact = tok != nil
	for i := range a.Count {
		t := tasks[i%len(tasks)]
		n := min(len(t.Inputs), a.MaxSteps)
		s := Session{ID: i}
		for k := range n {
			rng := rand.New(rand.NewPCG(uint64(a.Seed)^0x6167656e74, uint64(i)<<16|uint64(k)))
			if a.Nonce != 0 {
				rng = rand.New(textSource(a.Seed, a.Nonce, i<<16|k))
			}
			bt, err := b.build(ctx, rng, t.Inputs[k])
			if err != nil {
				return nil, nil, false, fmt.Errorf("task %s step %d: %w", t.ID, k+1, err)
			}
			exact = exact && bt.exact
			s.Turns = append(s.Turns, Turn{User: bt.text, UserTokens: bt.tokens, OutputTokens: t.Outputs[k]})
		}
		sessions = append(sessions, s)
		toolTimes = append(toolTimes, t.ToolTimes[:n])
	}
	return sessions, toolTimes, exact, nil
}
