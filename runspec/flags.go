package runspec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"servebench/validity"
)

// BindFlags registers a flag for every setting of s on fs, bound to s; a flag's name is its
// setting's key in a --config file (the field's YAML tag), and its default is s's value.
// A feature's own flags may be bound beside it, on the same fs and s.
func BindFlags(fs *pflag.FlagSet, s *Spec) {
	fs.StringVar(&s.URL, "url", s.URL, "server base URL, e.g. http://127.0.0.1:8000 (default: the built-in simulator)")
	fs.StringVar(&s.API, "api", s.API, "API family: "+strings.Join(APINames(), " | ")+" (auto: detect from the server's endpoints)")
	fs.StringVar(&s.Model, "model", s.Model, "model name (default: the first id from GET /v1/models)")
	fs.StringVar(&s.APIKey, "api-key", s.APIKey, "API key sent as a Bearer token (as x-api-key for --api anthropic-messages; default $OPENAI_API_KEY); never written anywhere")
	fs.StringArrayVar(&s.Headers, "header", s.Headers, "extra request header `K=V` (repeatable)")
	fs.DurationVar(&s.ReadyTimeout, "ready-timeout", s.ReadyTimeout, "how long to wait for the server to answer before the run")
	fs.StringVar(&s.ServerCmd, "server-cmd", s.ServerCmd, "start the server with this command line (run directly, no shell), {port} for a free loopback port (then --url follows from it), and stop it at the end; recorded, so run --like starts it again (docs/sweeps.md)")
	fs.StringArrayVar(&s.ServerEnv, "server-env", s.ServerEnv, "--server-cmd: `K=V` added to the server's environment (repeatable; credential-like names recorded redacted)")
	fs.BoolVar(&s.Insecure, "insecure", s.Insecure, "skip TLS certificate verification")
	fs.StringVar(&s.Tokenizer, "tokenizer", s.Tokenizer, "Hugging Face tokenizer.json for exact prompt lengths (default: the server's tokenize endpoint)")
	fs.IntVar(&s.InputTokens, "input-tokens", s.InputTokens, "synthetic prompt length in tokens")
	fs.IntVar(&s.OutputTokens, "output-tokens", s.OutputTokens, "output length in tokens (max_tokens)")
	fs.Float64Var(&s.RangeRatio, "range-ratio", s.RangeRatio, "lengths uniform in [L(1-r), L(1+r)] (vLLM's meaning)")
	bindLengthFlags(fs, s)
	bindStageFlags(fs, s)
	fs.StringVar(&s.Prompts, "prompts", s.Prompts, `JSONL prompts file: {"prompt": ...} or {"messages": [...]}, optional "output_tokens"`)
	fs.IntVar(&s.NumPrompts, "num-prompts", s.NumPrompts, "distinct prompts to build (default: warmup + requests, or 1000 for --duration)")
	fs.BoolVar(&s.FixedOutput, "fixed-output", s.FixedOutput, "ask for exactly --output-tokens (ignore_eos + min_tokens)")
	fs.StringVar(&s.Temperature, "temperature", s.Temperature, "sampling temperature (default: the server's)")
	fs.StringVar(&s.TopP, "top-p", s.TopP, "nucleus sampling top_p (default: the server's)")
	fs.StringVar(&s.ExtraBody, "extra-body", s.ExtraBody, "JSON object merged into every request body")
	fs.StringVar(&s.CacheSalt, "cache-salt", s.CacheSalt, "per-run: send a fresh cache_salt with every request of each run (vLLM, OpenAI-compatible APIs), so a --repeat, --like or sweep point cannot reuse an earlier run's prefix cache; none: send none")
	fs.StringVar(&s.Nonce, "nonce", s.Nonce, "fresh: generated prompt text of this invocation's own (a nonce drawn at start, kept in the header as workload.nonce; lengths stay the seed's), so no invocation is served from another's prefix cache; off: the seed alone decides the text (the same in every invocation); 16 hex digits: that nonce's text. A --like run replays its baseline's prompts unless given --nonce fresh")
	fs.BoolVar(&s.FlushCache, "flush-cache", s.FlushCache, "empty the server's prefix cache before every run and sweep point (SGLang's POST /flush_cache, else vLLM's POST /reset_prefix_cache, served with VLLM_SERVER_DEV_MODE=1; a server with neither is an error naming both). Every run already sends prompts of its own; this also clears what other traffic or an earlier invocation left")
	fs.StringVar(&s.Dataset, "dataset", s.Dataset, "prompts from a dataset, FORMAT:PATH: sharegpt (first human turn, the answer's length as output; vLLM's filters), mooncake or burstgpt (a trace: its arrival times and lengths replayed as an open loop; mooncake's hash_ids as shared prefix blocks, its rows of one session_id as a conversation whose turns wait for the turn before), answers (JSONL of {\"prompt\" or \"messages\", \"answer\", \"match\": exact|regex|choice|number}: every answer scored, accuracy with its interval)")
	fs.StringVar(&s.MaxInput, "max-input", s.MaxInput, "largest input file read (--dataset, --prompts, --trace), e.g. 500MB or 16GiB (default 8GiB)")
	fs.IntVar(&s.BlockTokens, "block-tokens", s.BlockTokens, "--dataset mooncake: tokens per hash-id block (default 512, Mooncake's)")
	fs.IntVar(&s.PrefixGroups, "prefix-groups", s.PrefixGroups, "shared-prefix workload: the prompts fall into this many groups sharing their first --prefix-tokens tokens (each group's own prefix; the rest of --input-tokens is each request's own)")
	fs.IntVar(&s.PrefixTokens, "prefix-tokens", s.PrefixTokens, "shared-prefix workload: tokens of the prefix a group shares")
	fs.StringVar(&s.Reuse, "reuse", s.Reuse, "share of the measured prompt tokens reusable by design, e.g. 50%: a shared-prefix workload (--prefix-groups, 1 unless set) whose --prefix-tokens give that share; the run checks the server's cached share against it")
	fs.IntVar(&s.Turns, "turns", s.Turns, "multi-turn sessions of this many turns: each turn --input-tokens new user tokens and an --output-tokens answer, the whole history sent again each turn (with --dataset sharegpt: its conversations, at most this many turns); --requests and --warmup count sessions (each measured session runs to its last turn; the warmup's sessions are its own), --concurrency counts sessions, --rate starts them")
	fs.StringVar(&s.ThinkTime, "think-time", s.ThinkTime, "sessions: pause before each next turn, fixed (2s) or exponential of that mean (exp:2s)")
	fs.StringVar(&s.PrefixOrder, "prefix-order", s.PrefixOrder, "shared-prefix workload: send the groups interleaved (default), grouped or shuffled")
	fs.StringVar(&s.SaveWorkload, "save-workload", s.SaveWorkload, "write the materialised prompts to this JSONL file (replay with --prompts)")
	fs.BoolVar(&s.EmbedPrompts, "embed-prompts", s.EmbedPrompts, "copy the prompts into the records header, so run --like replays them exactly; --embed-prompts=false keeps private prompts out of the records (--like then rebuilds them from the same settings or --prompts file, checked by hash)")
	fs.Int64Var(&s.Seed, "seed", s.Seed, "seed for prompts and arrivals")
	fs.IntVar(&s.Concurrency, "concurrency", s.Concurrency, "closed loop: N users, each sends its next request when its last finished (default 16)")
	fs.Float64Var(&s.Rate, "rate", s.Rate, "open loop: arrival rate in requests/s")
	fs.StringVar(&s.Arrival, "arrival", s.Arrival, "open-loop arrivals: poisson | constant | gamma")
	fs.Float64Var(&s.Burstiness, "burstiness", s.Burstiness, "gamma arrivals shape: 1 = Poisson, <1 burstier, >1 more regular")
	fs.IntVar(&s.MaxConcurrency, "max-concurrency", s.MaxConcurrency, "open loop: cap on requests in flight (0: no cap)")
	fs.IntVar(&s.Requests, "requests", s.Requests, "measured requests (default 200 unless --duration)")
	fs.DurationVar(&s.Duration, "duration", s.Duration, "send measured requests for this long")
	fs.Var(&warmupValue{s}, "warmup", "warmup requests, discarded from statistics; 0: none; auto: warm until ITL stops moving, judged over windows of the token gaps (default: two per closed-loop user, all at once and then one by one with twins of the shortest and longest measured prompts, so a server that compiles per shape is warm for every one the run meets; one per --max-concurrency slot; or one second of arrivals); the first measured request of a closed loop waits until the warmup has drained")
	fs.IntVar(&s.WarmupMax, "warmup-max", s.WarmupMax, "--warmup auto: at most this many warmup requests before its tail (a closed loop of several users then sends one more per user, ramped as its measured phase will start)")
	fs.DurationVar(&s.WarmupTimeout, "warmup-timeout", s.WarmupTimeout, "--warmup auto: warm at most this long")
	fs.Float64Var(&s.WarmupTolerance, "warmup-tolerance", s.WarmupTolerance, "--warmup auto: how close (a share) the last three warmup windows' ITL must be, with no trend across them; from the tenth window on, six windows with no falling trend (a rank test: a busy client's windows seldom agree) also end warming")
	fs.StringVar(&s.Shard, "shard", s.Shard, "run shard i of n of the workload (request k goes to shard k mod n, a replayed trace's sessions whole; users and rate are divided by n); merge with servebench report")
	fs.DurationVar(&s.Grace, "grace", s.Grace, "after Ctrl-C, how long in-flight requests may finish (0: cancel them at once)")
	fs.DurationVar(&s.RequestTimeout, "request-timeout", s.RequestTimeout, "per-request timeout (0: none)")
	fs.DurationVar(&s.IdleTimeout, "idle-timeout", s.IdleTimeout, "abort a stream that sends nothing for this long (0: none)")
	fs.StringVar(&s.ContinuousUsage, "continuous-usage-stats", s.ContinuousUsage, "ask for usage on every chunk (vLLM's stream_options.continuous_usage_stats) for per-event token counts and ITL (token): auto (on for the simulator), true or false")
	fs.BoolVar(&s.Prewarm, "prewarm-connections", s.Prewarm, "open one connection per user (or per --max-concurrency slot; 64 for an uncapped rate) before sending, so connection set-up stays out of TTFT")
	fs.StringVar(&s.ArrivalClock, "arrival-clock", s.ArrivalClock, "stamp stream events with the kernel's receive time of their bytes (kernel: servebench's own scheduling delay left out; Linux only, elsewhere read) or when servebench read them (read)")
	fs.StringVar(&s.SendClock, "send-clock", s.SendClock, "stamp a request sent with the kernel's transmit time of its last byte (kernel: servebench's own scheduling delay left out; Linux only, elsewhere write) or when net/http had it in its write buffer, before the flush (write)")
	fs.StringArrayVar((*[]string)(&s.Scrape), "scrape", s.Scrape, "also scrape this Prometheus endpoint during each run, e.g. http://HOST:8002/metrics for Triton (repeatable)")
	fs.DurationVar(&s.ScrapeInterval, "scrape-interval", s.ScrapeInterval, "how often to scrape the server's Prometheus endpoint (each scrape times out after this, at most 10s)")
	fs.BoolVar(&s.ScrapeAll, "scrape-all", s.ScrapeAll, "record every metric family, not only those that explain serving (vllm:*'s queue, KV cache and latency families, sglang:*, tgi_*, llamacpp:*, nv_*, DCGM_FI_*)")
	fs.BoolVar(&s.NoTraceContext, "no-trace-context", s.NoTraceContext, "send no W3C traceparent header (by default every request carries a fresh trace id, kept in its record, that joins the spans the server exports for it)")
	fs.StringVar(&s.OTLPListen, "otlp-listen", s.OTLPListen, "receive the server's OpenTelemetry spans on `ADDR` (OTLP over HTTP, protobuf or JSON at /v1/traces, and gRPC, on one port; a bare :PORT listens on loopback; standard: 127.0.0.1:4317 and :4318) and join each request's to its record: the server's queue, prefill and decode beside servebench's TTFT")
	fs.DurationVar(&s.OTLPWait, "otlp-wait", s.OTLPWait, "with --otlp-listen, how long each run waits after its last request for the spans still missing (servers export in batches: vLLM every 5s)")
	fs.StringVar(&s.SessionHeader, "session-header", s.SessionHeader, "send each multi-turn session's key (<run>-<session>) in header `NAME` on every turn, and a replayed trace row's session_id, so a KV-aware router (llm-d, Dynamo) can keep a conversation on one replica; recorded as the condition workload.session_header")
	fs.BoolVar(&s.NoScrape, "no-scrape", s.NoScrape, "record no server telemetry (by default the server family's /metrics is scraped every --scrape-interval)")
	fs.StringVar(&s.Ramp, "ramp", s.Ramp, "open loop: rate ramp over --duration, linear:FROM..TO or exp:FROM..TO req/s (arrivals per --arrival)")
	fs.StringVar(&s.Trace, "trace", s.Trace, `open loop: replay arrivals from a JSONL file of {"t": seconds} lines, optionally with "input_tokens" and "output_tokens"`)
	fs.IntVar(&s.MaxErrors, "max-errors", s.MaxErrors, "stop sending after this many failed requests (0: never)")
	fs.StringVar(&s.MaxErrorRate, "max-error-rate", s.MaxErrorRate, "stop sending when more than this share of requests failed, e.g. 5% (judged after 20)")
	fs.DurationVar(&s.WarmupDuration, "warmup-duration", s.WarmupDuration, "steady state: requests sent in the first D of --duration are warmup")
	fs.DurationVar(&s.CooldownDuration, "cooldown-duration", s.CooldownDuration, "steady state: requests sent in the last D of --duration are not measured")
	fs.StringArrayVar(&s.SLO, "slo", s.SLO, "service-level objective `NAME=DURATION` for goodput and attainment: ttft, tpot, itl, e2e or ttfo (time to first answer token of a reasoning model) (repeatable); NAME=DURATION@p99 is also a validity rule on that percentile (MLPerf early stopping); correct: only requests answered right (--dataset answers) or schema-valid (--response-format) count as good")
	fs.StringVar(&s.FailBelow, "fail-below", s.FailBelow, "exit with code 3 when SLO attainment is below this, e.g. 99% or 0.99")
	fs.StringVar(&s.Like, "like", s.Like, "replay an earlier run's workload and load settings (its records file); flags given beside it override them, and every setting that differs is printed and recorded as a change")
	fs.Var(&repeatValue{s}, "repeat", "run the same workload N times into one file (warmup before each), so run-to-run variation is measured; auto: until the key metrics' run-to-run 95% interval is within --repeat-width, at most --repeat-max runs")
	fs.IntVar(&s.RepeatMax, "repeat-max", s.RepeatMax, "--repeat auto: the most runs (default 10)")
	fs.Float64Var(&s.RepeatWidth, "repeat-width", s.RepeatWidth, "--repeat auto: the target half-width of the key metrics' run-to-run 95% interval, as a share of their value (default 0.05)")
	fs.StringVar(&s.Valid, "valid", s.Valid, "hold each run to MLPerf-style validity rules (VALID or INVALID, exit 7): a preset, "+strings.Join(validity.PresetNames(), ", "))
	fs.DurationVar(&s.ValidMinDuration, "valid-min-duration", s.ValidMinDuration, "validity: the least time from the first to the last scheduled measured request (presets: 600s)")
	fs.IntVar(&s.ValidMinRequests, "valid-min-requests", s.ValidMinRequests, "validity: the fewest measured requests")
	fs.StringArrayVar(&s.Conditions, "condition", s.Conditions, "declare a condition `key=value` that detection cannot see, e.g. gpu.name=H100 (repeatable)")
	fs.StringVar(&s.ConditionsFile, "conditions", s.ConditionsFile, "YAML file of declared conditions (key: value, nested maps flatten to dotted keys)")
	fs.StringVarP(&s.Output, "output", "o", s.Output, "records file (default servebench-<UTC time>.jsonl); an existing file is refused unless --force")
	fs.BoolVar(&s.Force, "force", s.Force, "let -o replace an existing records file (never one of the run's inputs)")
	fs.StringVar(&s.JSON, "json", s.JSON, "also write the JSON summary to this file")
	fs.BoolVarP(&s.Quiet, "quiet", "q", s.Quiet, "print nothing but errors and the summary")
	fs.BoolVar(&s.Explain, "explain", s.Explain, "after the summary, the rules of the steady-state check that fired, with their figures (docs/steady-policy.md); JSON carries them always, as steady_state.why")
	bindLoRAFlags(fs, s)
	bindMediaFlags(fs, s)
	bindToolsFlags(fs, s)     // flags_tools.go
	bindEndpointsFlags(fs, s) // flags_endpoints.go
	bindAnswersFlags(fs, s)   // flags_answers.go
	bindStartFlags(fs, s)
}

// Choices are the values each enumerated setting takes, by flag name (a dataset: its
// formats), for shell completion.
func Choices() map[string][]string {
	return map[string][]string{
		"api": APINames(), "arrival": {"poisson", "constant", "gamma"}, "arrival-clock": {"kernel", "read"},
		"cache-salt": {"none", "per-run"}, "continuous-usage-stats": {"auto", "true", "false"},
		"prefix-order": {"interleaved", "grouped", "shuffled"}, "dataset": {"sharegpt:", "mooncake:", "burstgpt:"},
	}
}

// CopyFlag sets the setting of flag name in s to its value in src, and marks it set: the
// key of that name, and for --warmup and --repeat (one flag, a count or auto) both fields.
func (s *Spec) CopyFlag(src *Spec, name string) {
	s.Copy(src, name)
	switch name {
	case "warmup":
		s.Copy(src, "warmup-auto")
	case "repeat":
		s.Copy(src, "repeat-auto")
	}
}

// warmupValue is --warmup: a count, or auto.
type warmupValue struct{ s *Spec }

func (w *warmupValue) String() string {
	if w.s == nil {
		return "0"
	}
	if w.s.WarmupAuto {
		return "auto"
	}
	return strconv.Itoa(w.s.Warmup)
}

func (w *warmupValue) Set(v string) error {
	if v == "auto" {
		w.s.WarmupAuto = true
		w.s.MarkSet("warmup-auto")
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("want a number of requests or auto")
	}
	w.s.Warmup, w.s.WarmupAuto = n, false
	return nil
}

func (w *warmupValue) Type() string { return "count|auto" }

// repeatValue is --repeat: a count, or auto.
type repeatValue struct{ s *Spec }

func (r *repeatValue) String() string {
	if r.s == nil {
		return "0"
	}
	if r.s.RepeatAuto {
		return "auto"
	}
	return strconv.Itoa(r.s.Repeat)
}

func (r *repeatValue) Set(v string) error {
	if v == "auto" {
		r.s.RepeatAuto, r.s.Repeat = true, 1 // the count is unused; 1 keeps it valid
		r.s.MarkSet("repeat-auto")
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("want a number of runs or auto")
	}
	r.s.Repeat, r.s.RepeatAuto = n, false
	return nil
}

func (r *repeatValue) Type() string { return "count|auto" }
