// Package runspec is the whole intent of a benchmark run as one typed value: its defaults,
// what the user set (flags and a YAML file), Validate (which never mutates), Resolve (the
// values derived from the others, kept apart from what was set) and Like (a run made like an
// earlier one, with the list of what changed).
//
// A field's YAML key is its flag's name, so a --config file and the command line say the same
// things; its JSON key is what a records header's config holds.
package runspec

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// Spec is the configuration of `servebench run` (and of each point of a sweep).
type Spec struct {
	// target
	URL          string        `yaml:"url" json:"url"`
	API          string        `yaml:"api" json:"api"`
	Model        string        `yaml:"model" json:"model"`
	APIKey       string        `yaml:"-" json:"-"` // never recorded
	Headers      []string      `yaml:"header" json:"header,omitempty"`
	ReadyTimeout time.Duration `yaml:"ready-timeout" json:"ready_timeout"`
	Insecure     bool          `yaml:"insecure" json:"insecure,omitempty"`
	Tokenizer    string        `yaml:"tokenizer" json:"tokenizer,omitempty"` // local tokenizer.json
	// ServerCmd is the server's command line when servebench starts the server itself
	// (package launch): {port} stands for a free loopback port, and the URL follows from it
	// when --url is not given. It is recorded, so run --like starts the same server again.
	ServerCmd string `yaml:"server-cmd" json:"server_cmd,omitempty"`
	// ServerEnv are K=V settings of the started server's environment (recorded with the
	// values of credential-like names redacted).
	ServerEnv []string `yaml:"server-env" json:"server_env,omitempty"`
	// ServerConfig names the configuration of a sweep over server configurations.
	ServerConfig string `yaml:"server-config-name" json:"server_config,omitempty"`

	// workload
	InputTokens  int     `yaml:"input-tokens" json:"input_tokens"`
	OutputTokens int     `yaml:"output-tokens" json:"output_tokens"`
	RangeRatio   float64 `yaml:"range-ratio" json:"range_ratio"`
	Prompts      string  `yaml:"prompts" json:"prompts,omitempty"`
	NumPrompts   int     `yaml:"num-prompts" json:"num_prompts,omitempty"`
	FixedOutput  bool    `yaml:"fixed-output" json:"fixed_output"`
	Temperature  string  `yaml:"temperature" json:"temperature,omitempty"`
	TopP         string  `yaml:"top-p" json:"top_p,omitempty"`
	ExtraBody    string  `yaml:"extra-body" json:"extra_body,omitempty"`
	// CacheSalt is none or per-run: a fresh cache_salt in every request body of each run,
	// so that a repeat or replay cannot reuse the prefix cache of an earlier one (vLLM).
	CacheSalt string `yaml:"cache-salt" json:"cache_salt"`
	// FlushCache empties the server's prefix cache (SGLang's POST /flush_cache, vLLM's POST
	// /reset_prefix_cache) before every run of the file, so that no repeat or sweep point is
	// served from an earlier one's.
	FlushCache bool `yaml:"flush-cache" json:"flush_cache,omitempty"`
	// Nonce is how generated prompt text differs between invocations: fresh (a nonce drawn
	// at start and recorded in the header, so no invocation sends another's text), off (the
	// seed alone decides the text: every invocation with the same seed sends the same), or
	// 16 hex digits (that nonce: the text of the invocation that recorded it).
	Nonce        string `yaml:"nonce" json:"nonce"`
	SaveWorkload string `yaml:"save-workload" json:"save_workload,omitempty"`
	// Dataset is FORMAT:PATH of a dataset the prompts come from: sharegpt (prompt and answer
	// length from each conversation), mooncake or burstgpt (a trace: arrival times and
	// lengths, replayed as an open loop). BlockTokens is a Mooncake trace's hash-id block.
	Dataset     string `yaml:"dataset" json:"dataset,omitempty"`
	BlockTokens int    `yaml:"block-tokens" json:"block_tokens,omitempty"`
	// MaxInput bounds the size of each input file (--dataset, --prompts, --trace), such as
	// 8GiB ("" is workload.DefaultMaxInputBytes): a stream that never ends stops with an error.
	// It changes what is an error, never what is sent, so it is not recorded.
	MaxInput string `yaml:"max-input" json:"-"`
	// PrefixGroups > 0 makes a shared-prefix workload: the prompts fall into that many
	// groups whose first PrefixTokens tokens are the same (the rest of --input-tokens is each
	// request's own), in PrefixOrder: interleaved (default), grouped or shuffled.
	PrefixGroups int    `yaml:"prefix-groups" json:"prefix_groups,omitempty"`
	PrefixTokens int    `yaml:"prefix-tokens" json:"prefix_tokens,omitempty"`
	PrefixOrder  string `yaml:"prefix-order" json:"prefix_order,omitempty"`
	// Reuse, when set ("50%" or 0.5), is the share of the measured prompt tokens the workload
	// repeats by design: Resolve makes the run a shared-prefix workload (PrefixGroups, 1
	// unless set, and the PrefixTokens that give this share; reuse.go), and the run checks
	// the server's cached share against it.
	Reuse string `yaml:"reuse" json:"reuse,omitempty"`
	// Turns > 1 makes multi-turn sessions of that many turns (each turn --input-tokens new
	// user tokens and --output-tokens answer tokens, the history sent again each turn; with
	// --dataset sharegpt, the conversations' own turns, at most Turns); ThinkTime is the pause
	// before each next turn, fixed ("2s") or exponential of that mean ("exp:2s").
	Turns     int    `yaml:"turns" json:"turns,omitempty"`
	ThinkTime string `yaml:"think-time" json:"think_time,omitempty"`
	// EmbedPrompts copies the prompts into the records header (for run --like); off for
	// prompts that must not travel with the records.
	EmbedPrompts bool `yaml:"embed-prompts" json:"embed_prompts"`
	// LoRAModules splits the traffic across LoRA adapters (NAME[:WEIGHT],…), picked by
	// LoRASelection: random (by weight, seeded) or round-robin (lora.go).
	LoRAModules   string `yaml:"lora-modules" json:"lora_modules,omitempty"`
	LoRASelection string `yaml:"lora-selection" json:"lora_selection,omitempty"`
	// Tools offers function tools with every chat request (an OpenAI tools JSON file, or
	// builtin:SET), ToolChoice how the model may use them; AgentSteps > 1 runs agent tasks of
	// at most that many model steps, ToolTime the tool latency before each next step (tools.go).
	Tools      string `yaml:"tools" json:"tools,omitempty"`
	ToolChoice string `yaml:"tool-choice" json:"tool_choice,omitempty"`
	AgentSteps int    `yaml:"agent-steps" json:"agent_steps,omitempty"`
	ToolTime   string `yaml:"tool-time" json:"tool_time,omitempty"`
	// BatchSize is the inputs per request of --api openai-embeddings, documents per request
	// of --api rerank (endpoints.go).
	BatchSize int `yaml:"batch-size" json:"batch_size,omitempty"`
	// ResponseFormat asks for structured output and checks every answer (answers.go): json
	// (a JSON object) or json-schema:FILE (an answer meeting that JSON Schema).
	ResponseFormat string `yaml:"response-format" json:"response_format,omitempty"`

	// InputDist and OutputDist draw each length from normal:MEAN,SD or lognormal:MEAN,SD;
	// Lengths draws (input, output) pairs from mix:INxOUT@W,… or file:PATH (runspec/lengths.go).
	InputDist  string `yaml:"input-dist" json:"input_dist,omitempty"`
	OutputDist string `yaml:"output-dist" json:"output_dist,omitempty"`
	Lengths    string `yaml:"lengths" json:"lengths,omitempty"`
	// Images, ImageFormat, ImageFiles and Audio put images and audio clips in every chat
	// request (media.go): --images 2x1024x1024, --image-format png, --audio 5s.
	Images      string `yaml:"images" json:"images,omitempty"`
	ImageFormat string `yaml:"image-format" json:"image_format,omitempty"`
	ImageFiles  string `yaml:"image-files" json:"image_files,omitempty"`
	Audio       string `yaml:"audio" json:"audio,omitempty"`
	Seed        int64  `yaml:"seed" json:"seed"`

	// load
	Concurrency    int           `yaml:"concurrency" json:"concurrency,omitempty"`
	Rate           float64       `yaml:"rate" json:"rate,omitempty"`
	Arrival        string        `yaml:"arrival" json:"arrival,omitempty"`
	Burstiness     float64       `yaml:"burstiness" json:"burstiness,omitempty"`
	MaxConcurrency int           `yaml:"max-concurrency" json:"max_concurrency,omitempty"`
	Requests       int           `yaml:"requests" json:"requests,omitempty"`
	Duration       time.Duration `yaml:"duration" json:"duration,omitempty"`
	// Warmup is the number of warmup requests; 0 is none. Unset, it is one per concurrency
	// slot (DefaultWarmup): that is why it is tracked as set or not rather than by value.
	Warmup int `yaml:"warmup" json:"warmup"`
	// WarmupAuto (--warmup auto) warms until the warmup's ITL stops moving (stat.WarmupJudge:
	// within WarmupTolerance over three windows, or no fall over six from the tenth window on),
	// after at least one request per slot and at most WarmupMax requests or WarmupTimeout.
	WarmupAuto      bool          `yaml:"warmup-auto" json:"warmup_auto,omitempty"`
	WarmupMax       int           `yaml:"warmup-max" json:"warmup_max,omitempty"`
	WarmupTimeout   time.Duration `yaml:"warmup-timeout" json:"warmup_timeout,omitempty"`
	WarmupTolerance float64       `yaml:"warmup-tolerance" json:"warmup_tolerance,omitempty"`
	Grace           time.Duration `yaml:"grace" json:"grace"`
	Shard           string        `yaml:"shard" json:"shard,omitempty"`
	RequestTimeout  time.Duration `yaml:"request-timeout" json:"request_timeout,omitempty"`
	IdleTimeout     time.Duration `yaml:"idle-timeout" json:"idle_timeout,omitempty"`
	// StartAt is when the schedule begins (--start-at, startat.go): an RFC 3339 time, or
	// +DURATION until Resolve. Not in the config: the header keeps the instant as start_at.
	StartAt string `yaml:"start-at" json:"-"`
	// ContinuousUsage is auto (on for the simulator), true or false.
	ContinuousUsage string `yaml:"continuous-usage-stats" json:"continuous_usage_stats"`
	// Prewarm opens the connections before each run (see client.Prewarm).
	Prewarm bool `yaml:"prewarm-connections" json:"prewarm_connections,omitempty"`
	// ArrivalClock is how stream events are stamped: kernel (the kernel's receive time of
	// their bytes, where the platform gives it; see client.Arrivals) or read (when servebench
	// read them). The records header keeps what was used.
	ArrivalClock string `yaml:"arrival-clock" json:"arrival_clock"`
	// SendClock is how a request's sent is stamped: kernel (the kernel's transmit time of its
	// last byte, where the platform gives it; see client.Sends) or write (when net/http had
	// it in its write buffer: the WroteRequest hook). The records header keeps what was used.
	SendClock string `yaml:"send-clock" json:"send_clock"`

	// server telemetry (package telemetry): the server family's Prometheus endpoint, and
	// every --scrape URL, sampled every ScrapeInterval during each run
	Scrape         ScrapeURLs    `yaml:"scrape" json:"scrape,omitempty"`
	ScrapeInterval time.Duration `yaml:"scrape-interval" json:"scrape_interval"`
	ScrapeAll      bool          `yaml:"scrape-all" json:"scrape_all,omitempty"` // every family, not only those that explain serving
	NoScrape       bool          `yaml:"no-scrape" json:"no_scrape,omitempty"`
	// NoTraceContext sends no W3C traceparent header (by default every request carries one,
	// its trace id in its record, so that server spans can be joined to it).
	NoTraceContext bool `yaml:"no-trace-context" json:"no_trace_context,omitempty"`
	// OTLPListen is the address of the embedded OTLP trace receiver (package spans); empty:
	// none. OTLPWait is how long a run waits after its last request for the spans still
	// missing.
	OTLPListen string        `yaml:"otlp-listen" json:"otlp_listen,omitempty"`
	OTLPWait   time.Duration `yaml:"otlp-wait" json:"otlp_wait,omitempty"`
	// SessionHeader names a request header that carries each session's key ("<run>-<session>")
	// on every turn, as KV-aware routers expect (llm-d, Dynamo); empty: none.
	SessionHeader string `yaml:"session-header" json:"session_header,omitempty"`

	// arrival profiles, stop rules, steady state and SLOs
	Ramp             string        `yaml:"ramp" json:"ramp,omitempty"`
	Stages           string        `yaml:"stages" json:"stages,omitempty"` // load stages (stages.go)
	Trace            string        `yaml:"trace" json:"trace,omitempty"`
	MaxErrors        int           `yaml:"max-errors" json:"max_errors,omitempty"`
	MaxErrorRate     string        `yaml:"max-error-rate" json:"max_error_rate,omitempty"`
	WarmupDuration   time.Duration `yaml:"warmup-duration" json:"warmup_duration,omitempty"`
	CooldownDuration time.Duration `yaml:"cooldown-duration" json:"cooldown_duration,omitempty"`
	SLO              []string      `yaml:"slo" json:"slo,omitempty"`
	FailBelow        string        `yaml:"fail-below" json:"fail_below,omitempty"`
	// validity rules (package validity): a preset and minimums; latency limits come from
	// --slo values written at a percentile (ttft=2s@p99)
	Valid            string        `yaml:"valid" json:"valid,omitempty"`
	ValidMinDuration time.Duration `yaml:"valid-min-duration" json:"valid_min_duration,omitempty"`
	ValidMinRequests int           `yaml:"valid-min-requests" json:"valid_min_requests,omitempty"`

	// baselines
	Like   string `yaml:"like" json:"-"`
	Repeat int    `yaml:"repeat" json:"repeat,omitempty"`
	// RepeatAuto (--repeat auto) repeats until the run-to-run interval of the key metrics is
	// within RepeatWidth, or RepeatMax runs (bench.AutoRepeat).
	RepeatAuto     bool     `yaml:"repeat-auto" json:"repeat_auto,omitempty"`
	RepeatMax      int      `yaml:"repeat-max" json:"repeat_max,omitempty"`
	RepeatWidth    float64  `yaml:"repeat-width" json:"repeat_width,omitempty"`
	Conditions     []string `yaml:"condition" json:"condition,omitempty"`
	ConditionsFile string   `yaml:"conditions" json:"conditions_file,omitempty"`

	// output
	Output string `yaml:"output" json:"-"`
	JSON   string `yaml:"json" json:"-"`
	Quiet  bool   `yaml:"quiet" json:"-"`
	// Explain prints the steady check's trace after the summary (metrics.SteadyPolicy).
	Explain bool `yaml:"explain" json:"-"`
	// Force lets the records file replace an existing file (never one of the run's inputs).
	Force bool `yaml:"force" json:"-"`

	// set holds the keys (flag names) the user set, by flag or config file.
	set map[string]bool
}

// Default is what `servebench run` does with no flags: the built-in simulator, 512-token
// prompts, 128-token outputs, 200 measured requests from 16 users (the last two derived in
// Resolve, so that another load shape can replace them).
func Default() Spec {
	return Spec{
		API: "openai-completions", ReadyTimeout: 60 * time.Second,
		InputTokens: 512, OutputTokens: 128, FixedOutput: true, Seed: 1, ContinuousUsage: "auto",
		ArrivalClock: "kernel", SendClock: "kernel", EmbedPrompts: true, CacheSalt: "none", Nonce: "fresh",
		Arrival: "poisson", Burstiness: 1, Grace: 30 * time.Second,
		WarmupMax: 2000, WarmupTimeout: 5 * time.Minute, WarmupTolerance: 0.1, ScrapeInterval: time.Second,
		OTLPWait: 10 * time.Second,
	}
}

// ScrapeURLs are --scrape endpoints; a records header holds them without credentials.
type ScrapeURLs []string

// MarshalJSON writes the URLs with their user information redacted (RedactURL).
func (u ScrapeURLs) MarshalJSON() ([]byte, error) {
	out := make([]string, len(u))
	for i, s := range u {
		out[i] = RedactURL(s)
	}
	return json.Marshal(out)
}

// Defaults of the derived settings (Resolve).
const (
	DefaultConcurrency = 16  // closed-loop users when no load shape is given
	DefaultRequests    = 200 // measured requests when neither --requests, --duration nor --trace is
)

// MarkSet records that the user set key (a flag name), by flag or config file.
func (s *Spec) MarkSet(keys ...string) {
	if s.set == nil {
		s.set = map[string]bool{}
	}
	for _, k := range keys {
		s.set[k] = true
	}
}

// unset forgets that the user set key.
func (s *Spec) unset(key string) { delete(s.set, key) }

// IsSet reports whether the user set key.
func (s *Spec) IsSet(key string) bool { return s.set[key] }

// SetKeys are the keys the user set, sorted.
func (s *Spec) SetKeys() []string { return slices.Sorted(maps.Keys(s.set)) }

// clone is a copy that shares nothing mutable with s.
func (s Spec) clone() Spec {
	s.set = maps.Clone(s.set)
	s.Headers, s.SLO, s.Conditions = slices.Clone(s.Headers), slices.Clone(s.SLO), slices.Clone(s.Conditions)
	s.ServerEnv = slices.Clone(s.ServerEnv)
	return s
}

// OpenLoop reports whether the run is an open loop: an arrival schedule, not N users.
func (s *Spec) OpenLoop() bool {
	return s.Rate > 0 || s.Ramp != "" || s.Trace != "" || s.TraceDataset() || s.rateStages()
}
