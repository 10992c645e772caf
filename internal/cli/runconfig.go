package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"servebench/client"
)

// runConfig is the configuration of `servebench run`. Its YAML keys are the flag names, so a
// --config file and the command line say the same things; flags given on the command line
// override the file.
type runConfig struct {
	// target
	URL          string        `yaml:"url" json:"url"`
	API          string        `yaml:"api" json:"api"`
	Model        string        `yaml:"model" json:"model"`
	APIKey       string        `yaml:"-" json:"-"` // never recorded
	Headers      []string      `yaml:"header" json:"header,omitempty"`
	ReadyTimeout time.Duration `yaml:"ready-timeout" json:"ready_timeout"`
	Insecure     bool          `yaml:"insecure" json:"insecure,omitempty"`
	Tokenizer    string        `yaml:"tokenizer" json:"tokenizer,omitempty"` // local tokenizer.json

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
	CacheSalt    string `yaml:"cache-salt" json:"cache_salt"`
	SaveWorkload string `yaml:"save-workload" json:"save_workload,omitempty"`
	// EmbedPrompts copies the prompts into the records header (for run --like); off for
	// prompts that must not travel with the records.
	EmbedPrompts bool  `yaml:"embed-prompts" json:"embed_prompts"`
	Seed         int64 `yaml:"seed" json:"seed"`

	// load
	Concurrency    int           `yaml:"concurrency" json:"concurrency,omitempty"`
	Rate           float64       `yaml:"rate" json:"rate,omitempty"`
	Arrival        string        `yaml:"arrival" json:"arrival,omitempty"`
	Burstiness     float64       `yaml:"burstiness" json:"burstiness,omitempty"`
	MaxConcurrency int           `yaml:"max-concurrency" json:"max_concurrency,omitempty"`
	Requests       int           `yaml:"requests" json:"requests,omitempty"`
	Duration       time.Duration `yaml:"duration" json:"duration,omitempty"`
	Warmup         int           `yaml:"warmup" json:"warmup"`
	Grace          time.Duration `yaml:"grace" json:"grace"`
	Shard          string        `yaml:"shard" json:"shard,omitempty"`
	RequestTimeout time.Duration `yaml:"request-timeout" json:"request_timeout,omitempty"`
	IdleTimeout    time.Duration `yaml:"idle-timeout" json:"idle_timeout,omitempty"`
	// ContinuousUsage is auto (on for the simulator), true or false.
	ContinuousUsage string `yaml:"continuous-usage-stats" json:"continuous_usage_stats"`
	// Prewarm opens the connections before each run (see client.Prewarm)
	Prewarm bool `yaml:"prewarm-connections" json:"prewarm_connections,omitempty"`
	// ArrivalClock is how stream events are stamped: kernel (the kernel's receive time of
	// their bytes, where the platform gives it; see client.Arrivals) or read (when servebench
	// read them). The records header keeps what was used.
	ArrivalClock string `yaml:"arrival-clock" json:"arrival_clock"`

	// arrival profiles, stop rules, steady state and SLOs (issue 5; see loadopts.go)
	Ramp             string        `yaml:"ramp" json:"ramp,omitempty"`
	Trace            string        `yaml:"trace" json:"trace,omitempty"`
	MaxErrors        int           `yaml:"max-errors" json:"max_errors,omitempty"`
	MaxErrorRate     string        `yaml:"max-error-rate" json:"max_error_rate,omitempty"`
	WarmupDuration   time.Duration `yaml:"warmup-duration" json:"warmup_duration,omitempty"`
	CooldownDuration time.Duration `yaml:"cooldown-duration" json:"cooldown_duration,omitempty"`
	SLO              []string      `yaml:"slo" json:"slo,omitempty"`
	FailBelow        string        `yaml:"fail-below" json:"fail_below,omitempty"`

	// baselines (issue 4; see run_like.go)
	Like           string   `yaml:"like" json:"-"`
	Repeat         int      `yaml:"repeat" json:"repeat,omitempty"`
	Conditions     []string `yaml:"condition" json:"condition,omitempty"`
	ConditionsFile string   `yaml:"conditions" json:"conditions_file,omitempty"`
	like           *likeBase
	fileKeys       []string // keys the --config file set

	// output
	Output string `yaml:"output" json:"-"`
	JSON   string `yaml:"json" json:"-"`
	Quiet  bool   `yaml:"quiet" json:"-"`
}

// defaultRunConfig is what `servebench run` does with no flags: the built-in simulator,
// 512-token prompts, 128-token outputs, 200 measured requests from 16 users.
func defaultRunConfig() runConfig {
	return runConfig{
		API: "openai-completions", ReadyTimeout: 60 * time.Second,
		InputTokens: 512, OutputTokens: 128, FixedOutput: true, Seed: 1, ContinuousUsage: "auto", ArrivalClock: "kernel", EmbedPrompts: true, CacheSalt: "none",
		Arrival: "poisson", Burstiness: 1, Requests: 0, Warmup: -1, Grace: 30 * time.Second,
	}
}

// bindRunFlags registers every run flag on fs, bound to c.
func bindRunFlags(fs *pflag.FlagSet, c *runConfig) {
	fs.StringVar(&c.URL, "url", c.URL, "server base URL, e.g. http://127.0.0.1:8000 (default: the built-in simulator)")
	fs.StringVar(&c.API, "api", c.API, "API family: "+strings.Join(apiNames, " | ")+" (auto: detect from the server's endpoints)")
	fs.StringVar(&c.Model, "model", c.Model, "model name (default: the first id from GET /v1/models)")
	fs.StringVar(&c.APIKey, "api-key", c.APIKey, "API key sent as a Bearer token (default $OPENAI_API_KEY); never written anywhere")
	fs.StringArrayVar(&c.Headers, "header", c.Headers, "extra request header K=V (repeatable)")
	fs.DurationVar(&c.ReadyTimeout, "ready-timeout", c.ReadyTimeout, "how long to wait for the server to answer before the run")
	fs.BoolVar(&c.Insecure, "insecure", c.Insecure, "skip TLS certificate verification")
	fs.StringVar(&c.Tokenizer, "tokenizer", c.Tokenizer, "Hugging Face tokenizer.json for exact prompt lengths (default: the server's tokenize endpoint)")
	fs.IntVar(&c.InputTokens, "input-tokens", c.InputTokens, "synthetic prompt length in tokens")
	fs.IntVar(&c.OutputTokens, "output-tokens", c.OutputTokens, "output length in tokens (max_tokens)")
	fs.Float64Var(&c.RangeRatio, "range-ratio", c.RangeRatio, "lengths uniform in [L(1-r), L(1+r)] (vLLM's meaning)")
	fs.StringVar(&c.Prompts, "prompts", c.Prompts, `JSONL prompts file: {"prompt": ...} or {"messages": [...]}, optional "output_tokens"`)
	fs.IntVar(&c.NumPrompts, "num-prompts", c.NumPrompts, "distinct prompts to build (default: warmup + requests, or 1000 for --duration)")
	fs.BoolVar(&c.FixedOutput, "fixed-output", c.FixedOutput, "ask for exactly --output-tokens (ignore_eos + min_tokens)")
	fs.StringVar(&c.Temperature, "temperature", c.Temperature, "sampling temperature (default: the server's)")
	fs.StringVar(&c.TopP, "top-p", c.TopP, "nucleus sampling top_p (default: the server's)")
	fs.StringVar(&c.ExtraBody, "extra-body", c.ExtraBody, "JSON object merged into every request body")
	fs.StringVar(&c.CacheSalt, "cache-salt", c.CacheSalt, "per-run: send a fresh cache_salt with every request of each run (vLLM, OpenAI-compatible APIs), so a --repeat, --like or sweep point cannot reuse an earlier run's prefix cache; none: send none")
	fs.StringVar(&c.SaveWorkload, "save-workload", c.SaveWorkload, "write the materialised prompts to this JSONL file (replay with --prompts)")
	fs.BoolVar(&c.EmbedPrompts, "embed-prompts", c.EmbedPrompts, "copy the prompts into the records header, so run --like replays them exactly; --embed-prompts=false keeps private prompts out of the records (--like then rebuilds them from the same settings or --prompts file, checked by hash)")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed for prompts and arrivals")
	fs.IntVar(&c.Concurrency, "concurrency", c.Concurrency, "closed loop: N users, each sends its next request when its last finished (default 16)")
	fs.Float64Var(&c.Rate, "rate", c.Rate, "open loop: arrival rate in requests/s")
	fs.StringVar(&c.Arrival, "arrival", c.Arrival, "open-loop arrivals: poisson | constant | gamma")
	fs.Float64Var(&c.Burstiness, "burstiness", c.Burstiness, "gamma arrivals shape: 1 = Poisson, <1 burstier, >1 more regular")
	fs.IntVar(&c.MaxConcurrency, "max-concurrency", c.MaxConcurrency, "open loop: cap on requests in flight (0: none)")
	fs.IntVar(&c.Requests, "requests", c.Requests, "measured requests (default 200 unless --duration)")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "send measured requests for this long")
	fs.IntVar(&c.Warmup, "warmup", c.Warmup, "warmup requests, discarded from statistics (default: one per concurrency slot)")
	fs.StringVar(&c.Shard, "shard", c.Shard, "run shard i of n of the workload (request k goes to shard k mod n; users and rate are divided by n); merge with servebench report")
	fs.DurationVar(&c.Grace, "grace", c.Grace, "after Ctrl-C, how long in-flight requests may finish")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "per-request timeout (0: none)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", c.IdleTimeout, "abort a stream that sends nothing for this long (0: none)")
	fs.StringVar(&c.ContinuousUsage, "continuous-usage-stats", c.ContinuousUsage, "ask for usage on every chunk (vLLM's stream_options.continuous_usage_stats) for per-event token counts and ITL (token): auto (on for the simulator), true or false")
	fs.BoolVar(&c.Prewarm, "prewarm-connections", c.Prewarm, "open one connection per user (or per --max-concurrency slot; 64 for an uncapped rate) before sending, so connection set-up stays out of TTFT")
	fs.StringVar(&c.ArrivalClock, "arrival-clock", c.ArrivalClock, "stamp stream events with the kernel's receive time of their bytes (kernel: servebench's own scheduling delay left out; Linux only, elsewhere read) or when servebench read them (read)")
	bindLoadFlags(fs, c)
	bindBaselineFlags(fs, c)
	fs.StringVarP(&c.Output, "output", "o", c.Output, "records file (default servebench-<UTC time>.jsonl)")
	fs.StringVar(&c.JSON, "json", c.JSON, "also write the JSON summary to this file")
	fs.BoolVarP(&c.Quiet, "quiet", "q", c.Quiet, "print nothing but errors and the summary")
}

// effectiveRunConfig builds the configuration: defaults, then the --config YAML file, then
// the flags given on the command line (which override the file). Unknown YAML keys are errors,
// so a typo cannot silently change nothing.
func effectiveRunConfig(cmd *cobra.Command, flags *runConfig, path string) (*runConfig, error) {
	c := *flags
	if path != "" {
		c = defaultRunConfig()
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, usageErr("--config: %v", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
			return nil, usageErr("--config %s: %s", path, oneLine(err.Error()))
		}
		// the keys the file sets are the user's settings, like flags (run --like lets them
		// override the baseline)
		var keys map[string]any
		_ = yaml.Unmarshal(b, &keys)
		for k := range keys {
			c.fileKeys = append(c.fileKeys, k)
		}
		// flags given on the command line win: copy them over the file's values
		cmd.Flags().Visit(func(f *pflag.Flag) { copyField(&c, flags, f.Name) })
	}
	if c.APIKey == "" {
		c.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	return &c, c.validate()
}

// copyField copies the field whose yaml key is name from src to dst (flag names are yaml keys).
func copyField(dst, src *runConfig, name string) {
	dv, sv := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	t := dv.Type()
	for i := range t.NumField() {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == name || (name == "api-key" && t.Field(i).Name == "APIKey") {
			dv.Field(i).Set(sv.Field(i))
		}
	}
}

// validate checks values and fills the defaults that depend on other settings.
func (c *runConfig) validate() error {
	if !knownAPI(c.API) {
		return usageErr("--api %q: want one of %s", c.API, strings.Join(apiNames, ", "))
	}
	if c.Rate < 0 {
		return usageErr("--rate must be positive")
	}
	if err := c.validateLoad(); err != nil {
		return err
	}
	if !c.openLoop() && c.Concurrency == 0 {
		c.Concurrency = 16
	}
	if c.Concurrency < 0 {
		return usageErr("--concurrency must be at least 1")
	}
	if c.Requests == 0 && c.Duration == 0 && c.Trace == "" {
		c.Requests = 200 // a trace without --requests replays every arrival
	}
	if c.Warmup < 0 {
		c.Warmup = c.defaultWarmup()
	}
	if _, err := c.sampling(); err != nil {
		return err
	}
	switch c.CacheSalt {
	case "", "none":
		c.CacheSalt = "none"
	case "per-run":
		// vLLM's field: other servers ignore it at best, reject every request at worst
		if c.API != "auto" && !strings.HasPrefix(c.API, "openai") {
			return usageErr("--cache-salt per-run sends vLLM's cache_salt: use it with an OpenAI-compatible --api, not %s", c.API)
		}
	default:
		return usageErr("--cache-salt %q: want per-run or none", c.CacheSalt)
	}
	switch c.ArrivalClock {
	case "kernel":
		if !client.KernelArrivalsSupported {
			c.ArrivalClock = "read" // recorded as what was done
		}
	case "read":
	default:
		return usageErr("--arrival-clock %q: want kernel or read", c.ArrivalClock)
	}
	switch c.ContinuousUsage {
	case "", "auto", "true", "false":
	default:
		return usageErr("--continuous-usage-stats %q: want auto, true or false", c.ContinuousUsage)
	}
	if sh, err := c.shardOf(); err != nil {
		return err
	} else if err := sh.validate(c); err != nil {
		return err
	}
	if _, err := parseHeaders(c.Headers); err != nil {
		return err
	}
	return nil
}

// defaultWarmup is one request per concurrency slot: closed-loop users, the open-loop cap, or
// one second of arrivals.
func (c *runConfig) defaultWarmup() int {
	switch {
	case c.Concurrency > 0:
		return c.Concurrency
	case c.Trace != "":
		return 0 // a trace replays exactly what was recorded
	case c.MaxConcurrency > 0:
		return c.MaxConcurrency
	case c.Ramp != "":
		return 1
	default:
		return max(1, int(c.Rate))
	}
}

// sampling parses the sampling flags.
func (c *runConfig) sampling() (client.Sampling, error) {
	var s client.Sampling
	for _, f := range []struct {
		name string
		val  string
		dst  **float64
	}{{"--temperature", c.Temperature, &s.Temperature}, {"--top-p", c.TopP, &s.TopP}} {
		if f.val == "" {
			continue
		}
		v, err := strconv.ParseFloat(f.val, 64)
		if err != nil {
			return s, usageErr("%s %q: not a number", f.name, f.val)
		}
		*f.dst = &v
	}
	if c.ExtraBody != "" {
		if err := json.Unmarshal([]byte(c.ExtraBody), &s.ExtraBody); err != nil || s.ExtraBody == nil {
			return s, usageErr("--extra-body: want a JSON object: %v", errOr(err, "null"))
		}
	}
	if c.CacheSalt == "per-run" {
		if _, ok := s.ExtraBody["cache_salt"]; ok {
			return s, usageErr("--cache-salt per-run and a cache_salt in --extra-body: choose one")
		}
	}
	return s, nil
}

// runSampling is the sampling of one run: the configured settings, plus with --cache-salt
// per-run a cache_salt of its own (random: a later invocation must not reuse it either).
func (c *runConfig) runSampling() (client.Sampling, error) {
	s, err := c.sampling()
	if err != nil || c.CacheSalt != "per-run" {
		return s, err
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	s.ExtraBody = maps.Clone(s.ExtraBody)
	if s.ExtraBody == nil {
		s.ExtraBody = map[string]any{}
	}
	s.ExtraBody["cache_salt"] = "servebench-" + hex.EncodeToString(b[:])
	return s, nil
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// asMap is the effective configuration as recorded in the header (the API key is never in it;
// header values that look like credentials are redacted).
func (c *runConfig) asMap() map[string]any {
	cc := *c
	cc.Headers = redactHeaders(c.Headers)
	b, _ := json.Marshal(cc)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// workloadSize is how many distinct prompts to build.
func (c *runConfig) workloadSize() int {
	switch {
	case c.NumPrompts > 0:
		return c.NumPrompts
	case c.Requests > 0:
		return c.Warmup + c.Requests
	default:
		return 1000
	}
}

// parseHeaders turns --header K=V arguments into request headers; a malformed one is a usage
// error that shows it with any credential redacted.
func parseHeaders(hs []string) (http.Header, error) {
	hdr := make(http.Header)
	for _, h := range hs {
		k, v, ok := strings.Cut(h, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageErr("--header %q: want K=V", redactHeaderArg(h))
		}
		hdr.Add(strings.TrimSpace(k), v)
	}
	return hdr, nil
}
