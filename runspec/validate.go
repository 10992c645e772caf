package runspec

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"servebench/load/pacer"
	"servebench/metrics"
	"servebench/record"
	"servebench/validity"
	"servebench/workload"
)

// Validate checks every setting and how they combine, and never changes s. A zero or
// negative value that means nothing is an error naming its flag, whether the user wrote it on
// the command line or in a config file; where 0 does mean something (--warmup 0: no warmup,
// --max-concurrency 0: no cap, --request-timeout 0: none) the flag's help says so.
func (s *Spec) Validate() error {
	for _, check := range []func() error{s.validateTarget, s.validateWorkload, s.validateCounts,
		s.validateLoad, s.validateSampling, s.validateModes, s.validateShard, s.validateDataset, s.validateLengths, s.validateStages, s.validateLoRA, s.validateMedia, s.validateTools,
		s.validateEndpoints, s.validateAnswers, s.validateStartAt} {
		if err := check(); err != nil {
			return err
		}
	}
	_, err := s.Declared()
	return err
}

// validateTarget checks where the server is and how to reach it. A URL that cannot be a
// server's is refused at once, not after the whole ready timeout.
func (s *Spec) validateTarget() error {
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		switch {
		case !strings.Contains(s.URL, "://"):
			// "127.0.0.1:8000" fails to parse and "localhost:8000" parses as scheme "localhost":
			// either way the fix is the same
			return Usagef("--url %q: no scheme: write http://%s (or https://)", RedactURL(s.URL), RedactURL(s.URL))
		case err != nil:
			return Usagef("--url %q: %v", RedactURL(s.URL), unwrapURLError(err))
		case u.Scheme != "http" && u.Scheme != "https":
			return Usagef("--url %q: want an http:// or https:// URL", RedactURL(s.URL))
		case u.Host == "" || u.Hostname() == "":
			return Usagef("--url %q: no host", RedactURL(s.URL))
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return Usagef("--url %q: port %s is not in 1..65535", RedactURL(s.URL), p)
			}
		}
	}
	if !knownAPI(s.API) {
		return Usagef("--api %q: want one of %s", s.API, strings.Join(APINames(), ", "))
	}
	if s.ReadyTimeout <= 0 {
		return Usagef("--ready-timeout %v: want a positive duration", s.ReadyTimeout)
	}
	if err := s.validateServer(); err != nil {
		return err
	}
	_, err := ParseHeaders(s.Headers)
	return err
}

// validateServer checks --server-cmd and --server-env: the URL either follows from the
// command's {port} or is given with --url, never both.
func (s *Spec) validateServer() error {
	for _, kv := range s.ServerEnv {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsAny(k, " \t") {
			return Usagef("--server-env %q: want K=V", RedactHeaderArg(kv))
		}
	}
	port := strings.Contains(s.ServerCmd, "{port}")
	// a sweep's template may leave the port to each configuration's words, checked with them
	args := strings.Contains(s.ServerCmd, "{args}")
	switch {
	case s.ServerCmd == "" && len(s.ServerEnv) > 0:
		return Usagef("--server-env is the environment of --server-cmd: give the command too")
	case s.ServerCmd == "":
	case strings.TrimSpace(s.ServerCmd) == "":
		return Usagef("--server-cmd is empty")
	case port && s.URL != "":
		return Usagef("--server-cmd has {port}, a port of servebench's choice, and --url names one: leave --url out, or write the port into both")
	case !port && !args && s.URL == "":
		return Usagef("--server-cmd: write {port} where the server takes its port (e.g. --port {port}), or give --url where it listens")
	}
	return nil
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// MaxTokens bounds every length in tokens (--input-tokens, --output-tokens, --block-tokens):
// no model has a longer context, and a bound keeps every product of lengths and counts far
// from overflowing.
const MaxTokens = 1 << 24

// MaxCount bounds every count of requests, prompts, users or groups (--requests, --warmup,
// --num-prompts, --concurrency, --prefix-groups …): their sums and products with lengths must
// not overflow, and a count past it is a typo, not a benchmark.
const MaxCount = 100_000_000

// validateWorkload checks the prompt and output lengths.
func (s *Spec) validateWorkload() error {
	switch {
	case s.InputTokens < 1 || s.InputTokens > MaxTokens:
		return Usagef("--input-tokens %d: want 1 to %d", s.InputTokens, MaxTokens)
	case s.OutputTokens < 1 || s.OutputTokens > MaxTokens:
		return Usagef("--output-tokens %d: want 1 to %d", s.OutputTokens, MaxTokens)
	case !(s.RangeRatio >= 0 && s.RangeRatio < 1):
		return Usagef("--range-ratio %v: want a ratio in [0, 1)", s.RangeRatio)
	case s.IsSet("num-prompts") && s.NumPrompts < 1, s.NumPrompts < 0:
		return Usagef("--num-prompts %d: want at least 1", s.NumPrompts)
	}
	return nil
}

// validateCounts refuses zero or negative counts, rates and timeouts.
func (s *Spec) validateCounts() error {
	// counts and rates that must be above zero: for each, zero means nothing (unset, it takes
	// its default), so a zero is refused when the user gave it
	for _, c := range []struct {
		key string
		ok  bool
	}{{"concurrency", s.Concurrency >= 1}, {"rate", s.Rate > 0 && !math.IsInf(s.Rate, 0)}, {"requests", s.Requests >= 1},
		{"duration", s.Duration > 0}, {"repeat", s.Repeat >= 1}} {
		if v, _ := field(s, c.key); !c.ok && (s.IsSet(c.key) || !v.IsZero()) {
			return Usagef("--%s %s: want a positive value (leave it out for the default)", c.key, s.Value(c.key))
		}
	}
	for _, c := range []struct {
		key string
		v   time.Duration
	}{{"request-timeout", s.RequestTimeout}, {"idle-timeout", s.IdleTimeout}, {"grace", s.Grace},
		{"warmup-duration", s.WarmupDuration}, {"cooldown-duration", s.CooldownDuration}} {
		if c.v < 0 {
			return Usagef("--%s %v: must not be negative", c.key, c.v)
		}
	}
	for _, c := range []struct {
		key string
		v   int
	}{{"warmup", s.Warmup}, {"max-concurrency", s.MaxConcurrency}, {"max-errors", s.MaxErrors}} {
		if c.v < 0 {
			return Usagef("--%s %d: must not be negative", c.key, c.v)
		}
	}
	for _, c := range []struct {
		key string
		v   int
	}{{"requests", s.Requests}, {"warmup", s.Warmup}, {"num-prompts", s.NumPrompts}, {"concurrency", s.Concurrency},
		{"max-concurrency", s.MaxConcurrency}, {"max-errors", s.MaxErrors}, {"repeat", s.Repeat}, {"warmup-max", s.WarmupMax}} {
		if c.v > MaxCount {
			return Usagef("--%s %d: want at most %d", c.key, c.v, MaxCount)
		}
	}
	switch {
	case s.WarmupMax < 1:
		return Usagef("--warmup-max %d: want at least 1", s.WarmupMax)
	case s.WarmupTimeout <= 0:
		return Usagef("--warmup-timeout %v: want a positive duration", s.WarmupTimeout)
	case !(s.WarmupTolerance > 0 && s.WarmupTolerance < 1):
		return Usagef("--warmup-tolerance %v: want a share in (0, 1), e.g. 0.1", s.WarmupTolerance)
	}
	if !(s.Burstiness > 0) || math.IsInf(s.Burstiness, 0) {
		return Usagef("--burstiness %v: want a positive shape", s.Burstiness)
	}
	return nil
}

// validateLoad checks the load shape: closed or open loop, stop rules, steady state, SLOs.
func (s *Spec) validateLoad() error {
	n := 0
	for _, set := range []bool{s.Rate > 0, s.Ramp != "", s.Trace != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return Usagef("--rate, --ramp and --trace exclude each other")
	case n == 1 && s.Concurrency > 0:
		return Usagef("--concurrency (closed loop) and --rate, --ramp or --trace (open loop) exclude each other (use --max-concurrency to cap an open loop)")
	case s.Ramp != "" && s.Duration <= 0:
		return Usagef("--ramp needs --duration: the ramp lasts the whole duration")
	case (s.WarmupDuration > 0 || s.CooldownDuration > 0) && s.Duration <= 0:
		return Usagef("--warmup-duration and --cooldown-duration need --duration")
	case s.Duration > 0 && s.WarmupDuration+s.CooldownDuration >= s.Duration:
		return Usagef("--warmup-duration + --cooldown-duration must be shorter than --duration")
	case s.FailBelow != "" && len(s.SLO) == 0:
		return Usagef("--fail-below needs at least one --slo")
	}
	if _, err := pacer.New(s.Arrival, 1, s.Burstiness, s.Seed); err != nil {
		return Usagef("--arrival: %v", err)
	}
	if s.Ramp != "" {
		if _, err := pacer.ParseRamp(s.Ramp, s.Duration, nil); err != nil {
			return Usagef("--ramp: %v", err)
		}
	}
	for _, p := range []struct{ flag, val string }{{"--max-error-rate", s.MaxErrorRate}, {"--fail-below", s.FailBelow}} {
		if p.val != "" {
			if _, err := metrics.ParseShare(p.flag, p.val); err != nil {
				return Usage(err)
			}
		}
	}
	if _, err := metrics.ParseSLOs(s.SLO); err != nil {
		return Usage(err)
	}
	return s.validateVerdicts()
}

// validateVerdicts checks the validity rules and --repeat auto's settings.
func (s *Spec) validateVerdicts() error {
	switch {
	case s.ValidMinDuration < 0:
		return Usagef("--valid-min-duration %v: must not be negative", s.ValidMinDuration)
	case s.ValidMinRequests < 0:
		return Usagef("--valid-min-requests %d: must not be negative", s.ValidMinRequests)
	// zero stands for the default when left out; given, it means nothing and is refused
	case s.RepeatMax < 0 || s.RepeatMax == 1 || (s.RepeatMax == 0 && s.IsSet("repeat-max")):
		return Usagef("--repeat-max %d: want at least 2 runs", s.RepeatMax)
	case !(s.RepeatWidth > 0 && s.RepeatWidth < 1) && (s.RepeatWidth != 0 || s.IsSet("repeat-width")):
		return Usagef("--repeat-width %g: want a share in (0, 1), e.g. 0.05 for 5%%", s.RepeatWidth)
	}
	_, err := s.ValidityRules()
	return Usage(err)
}

// ValidityRules are the rules the run is held to (none when no --valid, --valid-min-* or
// --slo NAME=D@pNN is given).
func (s *Spec) ValidityRules() (validity.Rules, error) {
	return validity.Build(s.Valid, s.ValidMinDuration, s.ValidMinRequests, s.SLO)
}

// validateSampling checks the sampling settings and the request body additions.
func (s *Spec) validateSampling() error {
	_, err := s.Sampling()
	return err
}

// validateModes checks the settings that take one of a few words.
func (s *Spec) validateModes() error {
	if err := s.validateScrape(); err != nil {
		return err
	}
	if err := s.validateSpans(); err != nil { // spans.go
		return err
	}
	switch s.CacheSalt {
	case "", "none":
	case "per-run":
		// vLLM's field: other servers ignore it at best, reject every request at worst
		if s.API != "auto" && !strings.HasPrefix(s.API, "openai") {
			return Usagef("--cache-salt per-run sends vLLM's cache_salt: use it with an OpenAI-compatible --api, not %s", s.API)
		}
	default:
		return Usagef("--cache-salt %q: want per-run or none", s.CacheSalt)
	}
	if err := s.validateNonce(); err != nil {
		return err
	}
	switch s.ArrivalClock {
	case "kernel", "read":
	default:
		return Usagef("--arrival-clock %q: want kernel or read", s.ArrivalClock)
	}
	switch s.SendClock {
	case "kernel", "write":
	default:
		return Usagef("--send-clock %q: want kernel or write", s.SendClock)
	}
	switch s.ContinuousUsage {
	case "", "auto", "true", "false":
	default:
		return Usagef("--continuous-usage-stats %q: want auto, true or false", s.ContinuousUsage)
	}
	return nil
}

// validateShard refuses splits that cannot be made fairly.
func (s *Spec) validateShard() error {
	sh, err := s.ShardOf()
	if err != nil || !sh.Split() {
		return err
	}
	switch {
	case s.Ramp != "":
		return Usagef("--shard with --ramp is not supported: split a constant --rate or a --trace instead")
	case s.WarmupAuto:
		return Usagef("--shard with --warmup auto is not supported: each shard would stop warming at its own time; give --warmup N")
	case s.Concurrency > 0 && s.Concurrency < sh.N:
		return Usagef("--concurrency %d is fewer users than the %d shards", s.Concurrency, sh.N)
	case s.MaxConcurrency > 0 && s.MaxConcurrency < sh.N:
		return Usagef("--max-concurrency %d is smaller than the %d shards", s.MaxConcurrency, sh.N)
	}
	return nil
}

// Shard is this process's part of a run split across N load generators (--shard I/N).
// Request k of the workload goes to shard k mod N. The zero Shard is the whole run.
type Shard struct{ I, N int }

// ShardOf parses --shard.
func (s *Spec) ShardOf() (Shard, error) {
	if s.Shard == "" {
		return Shard{}, nil
	}
	i, n, err := record.ParseShard(s.Shard)
	if err != nil {
		return Shard{}, Usagef("--shard: %v", err)
	}
	return Shard{i, n}, nil
}

// Split reports whether the run is split at all.
func (sh Shard) Split() bool { return sh.N > 1 }

// validateScrape checks the telemetry settings: a positive interval and http(s) endpoints.
func (s *Spec) validateScrape() error {
	if s.ScrapeInterval <= 0 {
		return Usagef("--scrape-interval %v: want a positive duration", s.ScrapeInterval)
	}
	for _, raw := range s.Scrape {
		if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Usagef("--scrape %q: want an http:// or https:// URL", RedactURL(raw))
		}
	}
	return nil
}

// validateNonce checks --nonce: fresh, off or 16 hex digits (not all zero).
func (s *Spec) validateNonce() error {
	switch s.Nonce {
	case "", "fresh", "off":
		return nil
	}
	if _, err := workload.ParseNonce(s.Nonce); err != nil {
		return Usagef("--nonce %q: want fresh, off, or the 16 hex digits a records header keeps as workload.nonce", s.Nonce)
	}
	return nil
}
