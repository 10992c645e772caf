// Package record defines servebench's records file: the spine every command reads.
//
// A records file is JSON Lines. The first line is a Header (schema version, command line,
// wall-clock start, effective configuration, workload hash, conditions); every later line is
// one Record: the raw observations of one request. Records hold observations, never derived
// metrics: metrics are computed from them by package metrics, so an old file can be
// re-analysed by a newer servebench.
//
// Every timestamp in a Record is nanoseconds since the run start t0, read from Go's
// monotonic clock (time.Since(t0)). The header keeps t0 as wall-clock time so that files
// from several machines can be aligned.
package record

import (
	"encoding/json"
	"time"
)

// SchemaVersion is the version of the records file format written by this package.
// Readers accept files whose schema is <= SchemaVersion.
const SchemaVersion = 1

// Phases of a request.
const (
	PhaseWarmup  = "warmup"
	PhaseMeasure = "measure"
	// PhaseCooldown marks requests sent in the last --cooldown-duration of a run: like warmup,
	// they load the server but never enter statistics.
	PhaseCooldown = "cooldown"
)

// Sources of a token count (docs/design/METRICS.md: "with their source").
const (
	SourceServer    = "server"    // the server's usage report
	SourceEvents    = "events"    // summed per-event counts reported by the server
	SourceTokenizer = "tokenizer" // counted by a tokenizer
	SourceCount     = "count"     // one token per content event (a guess)
	SourceRequested = "requested" // the length the workload asked for (prompt side only)
)

// Error classes: the fixed list of docs/design/METRICS.md.
const (
	ErrConnect          = "connect"
	ErrHTTP4xx          = "http_4xx"
	ErrHTTP5xx          = "http_5xx"
	ErrRateLimited      = "rate_limited"
	ErrStreamErrorEvent = "stream_error_event"
	ErrTruncated        = "truncated"
	ErrTimeout          = "timeout"
	ErrCancelled        = "cancelled"
	ErrDecode           = "decode"
)

// ErrorClasses lists every error class in a fixed order, for summaries.
var ErrorClasses = []string{
	ErrConnect, ErrHTTP4xx, ErrHTTP5xx, ErrRateLimited, ErrStreamErrorEvent,
	ErrTruncated, ErrTimeout, ErrCancelled, ErrDecode,
}

// Header is the first line of a records file.
type Header struct {
	Schema    int       `json:"schema"`
	Version   string    `json:"servebench_version"`
	GoVersion string    `json:"go_version,omitempty"`
	Command   []string  `json:"command"` // os.Args with secrets redacted
	Start     time.Time `json:"start"`   // wall clock at t0 (RFC 3339)
	Target    Target    `json:"target"`
	Workload  Workload  `json:"workload"`
	// Config is the effective run configuration (flags and config file merged), secrets removed.
	Config map[string]any `json:"config,omitempty"`
	// ConfigSet are the settings (by flag name) the user gave, by flag or config file; every
	// other value of Config was a default or derived from the others. run --like uses it to
	// tell the baseline's choices from what was filled in. Absent from older files.
	ConfigSet []string `json:"config_set,omitempty"`
	// Conditions are the facts that must stay fixed between a baseline and a later run.
	Conditions []Condition `json:"conditions,omitempty"`
	// Observed are figures of the server's load state seen when its conditions were asked
	// (Ollama: whether the model under test was loaded, the memory it held, the other models
	// loaded). They describe the moment, not what must stay fixed: compare never reads them.
	Observed []Condition `json:"observed,omitempty"`
	// Shard is "i/n" when this file is one shard of a split run.
	Shard string `json:"shard,omitempty"`
	// StartAt is the instant the run waited for before its t0 (run --start-at), so that
	// the shards of a split run start together; zero when it did not wait.
	StartAt time.Time `json:"start_at,omitzero"`
	// Label names a run inside a sweep or repeat set.
	Label string `json:"label,omitempty"`
	// Sweep is the sweep mode of a file holding several runs (servebench sweep): "concurrency",
	// "rate" or "auto"; each run's load is in its RunEnd line.
	Sweep string `json:"sweep,omitempty"`
	// Ends are the run-end lines met so far by the Reader that returned this header (they
	// follow their run's records, so the list is complete once Read returned io.EOF). Not
	// part of the header line itself.
	Ends []RunEnd `json:"-"`
	// Telemetry are the server's Prometheus samples met so far by the Reader (each run's
	// are written just before its run-end line). Not part of the header line itself.
	Telemetry []Telemetry `json:"-"`
	// Spans are the server-spans lines met so far by the Reader (spans.go). Not part of
	// the header line itself.
	Spans []ServerSpans `json:"-"`
	// Load is the run's load as its resolved spec knew it (nil in a sweep, whose points each
	// have their own, and in a file from before).
	Load *Load `json:"load,omitempty"`
	// SweepEnd is a sweep's conclusions, from its sweep-end line (sweepend.go) once the Reader
	// met it; nil for a run, or a sweep that wrote none. Not part of the header line itself.
	SweepEnd *SweepEnd `json:"-"`
	// Like names the baseline this run was made like (run --like) and the settings that were
	// deliberately changed from it.
	Like *Like `json:"like,omitempty"`
}

// Like is a run's baseline and its deliberate changes (flags given beside run --like).
type Like struct {
	File    string   `json:"file"`
	Hash    string   `json:"workload_hash"`
	Changes []Change `json:"changes,omitempty"`
}

// Change is one setting changed from the baseline: its flag name and both values.
type Change struct {
	Key   string `json:"key"`
	Base  string `json:"base"`
	Value string `json:"value"`
}

// Target describes the server that was measured.
type Target struct {
	URL       string `json:"url"`
	API       string `json:"api"`
	Model     string `json:"model"`
	Simulated bool   `json:"simulated"` // true when the target was servebench's built-in simulator
}

// Workload identifies the fixed workload that was sent.
type Workload struct {
	Hash   string `json:"hash"`   // sha256 of one run's materialised workload, the first part (see package workload)
	Source string `json:"source"` // "synthetic" or the prompts file name
	Count  int    `json:"count"`  // requests in one run's materialised workload (the first part)
	Seed   int64  `json:"seed"`
	// Nonce is the per-invocation nonce mixed into the generated prompt text (16 hex
	// digits; absent: none, the text is the seed's alone), so that no invocation sends the
	// text of another; the lengths are the seed's either way (run --nonce).
	Nonce string `json:"nonce,omitempty"`
	// PromptLengths says how prompt lengths were obtained: "exact" (measured by Tokenizer),
	// or "approximate": no tokenizer reachable (Tokenizer empty), or some prompts could not
	// be built to their length with Tokenizer.
	PromptLengths string `json:"prompt_lengths,omitempty"`
	Tokenizer     string `json:"tokenizer,omitempty"` // what measured the prompts, e.g. "server:/tokenize"
	File          string `json:"file,omitempty"`      // --save-workload path, when written
	// Dataset is the dataset the prompts came from ("sharegpt:file.json", by file name) and
	// DatasetSHA256 its content hash, so a different file of the same name is told apart.
	Dataset       string `json:"dataset,omitempty"`
	DatasetSHA256 string `json:"dataset_sha256,omitempty"`
	// ReusableShare is the share of one run's prompt tokens the workload itself repeats, as it
	// is laid out: each measured prompt's longest prefix shared with one before it
	// (workload.Repeats). What a run sent is in its records (Record.Repeats).
	ReusableShare float64 `json:"reusable_share,omitempty"`
	// RepeatsRecorded says every record carries what its prompt repeats (Record.Repeats, absent
	// when 0); files from before judge cache hits against ReusableShare instead.
	RepeatsRecorded bool `json:"repeats_recorded,omitempty"`
	// Lengths are one run's (the first part's) prompt and output lengths; nil before.
	Lengths *Lengths `json:"lengths,omitempty"`
	// Parts, when present, lay Requests out run by run: run r of the file sent part r (mod
	// the number of parts) — its own prompts, so no run measures what an earlier one sent —
	// the first Warmup of a part (sessions, for a multi-turn workload) for its warmup only.
	// Absent: one set that every run sent, cycled (a prompts file, or a file from before).
	Parts []Part `json:"parts,omitempty"`
	// Requests is the materialised workload itself, a JSON array of prompts-file lines
	// ({"prompt" or "messages", "output_tokens", "input_tokens"}), so that run --like replays
	// exactly what was sent even when no workload file travels with the records.
	Requests json.RawMessage `json:"requests,omitempty"`
	// Recipe stands for Requests when every prompt is synthetic: how to rebuild each prompt
	// (seed, index, words kept, filler) and the sha256 of the text they rebuild, a few KB
	// where the text of long prompts is hundreds of MB (workload.HeaderRecipe). Absent from
	// older files, which embed Requests.
	Recipe json.RawMessage `json:"recipe,omitempty"`
}

// Load is a run's load shape, recorded once so that every reader tells an open loop from a
// closed one the same way.
type Load struct {
	// Open is runspec.Spec.OpenLoop: requests sent on an arrival schedule (a rate, a ramp, a
	// --trace file or a trace dataset such as Mooncake or BurstGPT), not by N users.
	Open bool `json:"open_loop"`
	// Arrivals and Span describe a replayed trace: how many arrivals it holds and the time
	// from its first to its last (ns). Zero for any other load.
	Arrivals int   `json:"arrivals,omitempty"`
	Span     int64 `json:"span,omitempty"`
	// Stages are run --stages' load stages in order (Record.Stage indexes them); none for
	// a run of one load.
	Stages []Stage `json:"stages,omitempty"`
}

// Lengths are the prompt and output lengths one run's workload asks for, in tokens.
type Lengths struct {
	Input  Dist `json:"input"`  // the prompts' lengths as built (all zero when unknown)
	Output Dist `json:"output"` // the output lengths asked for (max_tokens)
}

// Dist summarises lengths: their mean, median and maximum.
type Dist struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	Max  int     `json:"max"`
}

// Fixed reports whether every length was the same (or none was known).
func (d Dist) Fixed() bool { return d.Mean == float64(d.Max) && d.P50 == float64(d.Max) }

// Part is one run's share of the workload (Workload.Parts).
type Part struct {
	Count  int `json:"count"`  // requests (turns, for sessions) of the part
	Warmup int `json:"warmup"` // the warmup's own, at its start: requests, or whole sessions
	// Sessions counts a multi-turn part's sessions (0 for any other workload)
	Sessions int `json:"sessions,omitempty"`
}

// Condition is one fact that must stay fixed between runs.
type Condition struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"` // detected | declared | unknown
}

// Event is one streamed event that carried generated output. 16 bytes in memory.
type Event struct {
	T int64 // arrival, ns since t0, stamped when the event's bytes were read
	N int32 // tokens it carried; 0 when unknown
}

// Record is one request's raw observations. Times are ns since t0; zero means "did not happen"
// (t0 itself is never a valid event time because the run starts before any request).
type Record struct {
	ID    int    `json:"id"`              // index in the materialised workload
	Run   int    `json:"run,omitempty"`   // repeat or sweep-point index
	Phase string `json:"phase"`           // warmup | measure | cooldown
	Shard int    `json:"shard,omitempty"` // shard index in a split run
	// Session and Turn place the request in a multi-turn session (both count from 1; both 0
	// for a request of its own).
	Session int `json:"session,omitempty"`
	Turn    int `json:"turn,omitempty"`
	// Stage is the index (from 0) of the load stage the request was sent in (run --stages;
	// Load.Stages in the header describes each).
	Stage int `json:"stage,omitempty"`
	// Adapter is the LoRA adapter the request was sent to (its model field); absent for the
	// run's model.
	Adapter string `json:"adapter,omitempty"`
	// TraceID is the W3C trace id (32 hex digits) of the traceparent header the request
	// carried: the key that joins the spans a server exported for it (ServerSpans). Absent
	// when the run sent none (run --no-trace-context) or in a file from before.
	TraceID string `json:"trace_id,omitempty"`

	Scheduled  int64   `json:"scheduled"`             // intended send time
	Dispatched int64   `json:"dispatched"`            // handed to the HTTP client
	Connect    int64   `json:"connect,omitempty"`     // duration (ns) of DNS+dial+TLS when a new connection was made
	Sent       int64   `json:"sent,omitempty"`        // request completely written
	Headers    int64   `json:"headers,omitempty"`     // response headers received
	FirstEvent int64   `json:"first_event,omitempty"` // first event with any choices entry
	Done       int64   `json:"done,omitempty"`        // stream ended
	Events     []Event `json:"events,omitempty"`      // content events

	InputTokens int `json:"input_tokens,omitempty"` // prompt length the workload asked for
	// Repeats is the share of the prompt (0 to 1) that begins as a prompt sent before it in
	// this run (its warmup's included): the prefix a cache may serve by design (a shared
	// prefix, a session's history, a prompt sent again). Absent: none, or a file from before
	// (Workload.RepeatsRecorded tells them apart).
	Repeats            float64 `json:"repeats,omitempty"`
	MaxTokens          int     `json:"max_tokens,omitempty"`   // output length asked for
	FixedOutput        bool    `json:"fixed_output,omitempty"` // ignore_eos/min_tokens requested
	PromptTokens       int     `json:"prompt_tokens"`
	PromptTokensSource string  `json:"prompt_tokens_source,omitempty"`
	OutputTokens       int     `json:"output_tokens"`
	OutputTokensSource string  `json:"output_tokens_source,omitempty"`
	// Reasoning: absent unless the server sent reasoning output (see reasoning.go).
	ReasoningEvents       int    `json:"reasoning_events,omitempty"`        // content events before the first answer event, all reasoning only
	FirstAnswer           int64  `json:"first_answer,omitempty"`            // the first answer event's arrival, when ReasoningEvents > 0
	ReasoningTokens       int    `json:"reasoning_tokens,omitempty"`        // reasoning tokens of the output (part of OutputTokens)
	ReasoningTokensSource string `json:"reasoning_tokens_source,omitempty"` // server, events or count
	// Images, ImageBytes, AudioClips, AudioBytes and AudioMS are the media the request
	// carried: counts, encoded file bytes (before base64) and clip length (media.go).
	Images     int   `json:"images,omitempty"`
	ImageBytes int64 `json:"image_bytes,omitempty"`
	AudioClips int   `json:"audio_clips,omitempty"`
	AudioBytes int64 `json:"audio_bytes,omitempty"`
	AudioMS    int64 `json:"audio_ms,omitempty"`
	// Inputs is how many inputs a pooling request carried: an embeddings batch's texts or a
	// rerank request's documents (absent for generation).
	Inputs int `json:"inputs,omitempty"`

	// Correct, SchemaValid, SchemaError, Answer and Expected judge what the request answered
	// (answers.go): absent unless the run scored answers or checked a response format; Answer
	// (clipped) and Expected (the key's answer) are kept for a wrong or invalid answer only.
	Correct     *bool  `json:"correct,omitempty"`
	SchemaValid *bool  `json:"schema_valid,omitempty"`
	SchemaError string `json:"schema_error,omitempty"`
	Answer      string `json:"answer,omitempty"`
	Expected    string `json:"expected,omitempty"`

	Status     int    `json:"status,omitempty"`
	ErrorClass string `json:"error_class,omitempty"`
	Error      string `json:"error,omitempty"`

	// Tool calls and agent steps (tools.go): absent unless the request carried tools.
	Task          int        `json:"task,omitempty"`            // agent task, from 1
	Step          int        `json:"step,omitempty"`            // step within the task, from 1
	ToolTime      int64      `json:"tool_time,omitempty"`       // tool latency waited before this step (ns)
	FirstToolCall int64      `json:"first_tool_call,omitempty"` // the first tool-call delta's arrival
	ToolCalls     []ToolCall `json:"tool_calls,omitempty"`

	// Server holds figures the server reported about itself (llama.cpp timings, Ollama durations),
	// kept raw so they can be checked against ours.
	Server map[string]float64 `json:"server,omitempty"`
}

// OK reports whether the request completed without error.
func (r *Record) OK() bool { return r.ErrorClass == "" }

// Measured reports whether the record belongs in statistics (not warmup or cooldown).
func (r *Record) Measured() bool { return r.Phase != PhaseWarmup && r.Phase != PhaseCooldown }
