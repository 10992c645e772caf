package cli

import (
	"os"

	"github.com/spf13/pflag"

	"servebench/load"
	"servebench/load/pacer"
)

// bindLoadFlags registers the arrival-profile, stop-rule, steady-state and SLO flags.
func bindLoadFlags(fs *pflag.FlagSet, c *runConfig) {
	fs.StringVar(&c.Ramp, "ramp", c.Ramp, "open loop: rate ramp over --duration, linear:FROM..TO or exp:FROM..TO req/s (arrivals per --arrival)")
	fs.StringVar(&c.Trace, "trace", c.Trace, `open loop: replay arrivals from a JSONL file of {"t": seconds} lines, optionally with "input_tokens" and "output_tokens"`)
	fs.IntVar(&c.MaxErrors, "max-errors", c.MaxErrors, "stop sending after this many failed requests (0: never)")
	fs.StringVar(&c.MaxErrorRate, "max-error-rate", c.MaxErrorRate, "stop sending when more than this share of requests failed, e.g. 5% (judged after 20)")
	fs.DurationVar(&c.WarmupDuration, "warmup-duration", c.WarmupDuration, "steady state: requests sent in the first D of --duration are warmup")
	fs.DurationVar(&c.CooldownDuration, "cooldown-duration", c.CooldownDuration, "steady state: requests sent in the last D of --duration are not measured")
	fs.StringArrayVar(&c.SLO, "slo", c.SLO, "service-level objective NAME=DURATION for goodput and attainment: ttft, tpot, itl or e2e (repeatable)")
	fs.StringVar(&c.FailBelow, "fail-below", c.FailBelow, "exit with code 3 when SLO attainment is below this, e.g. 99%")
}

// openLoop reports whether the run is an open loop: an arrival schedule, not N users.
func (c *runConfig) openLoop() bool { return c.Rate > 0 || c.Ramp != "" || c.Trace != "" }

// validateLoad checks the flags of bindLoadFlags and how they combine with the load shape.
func (c *runConfig) validateLoad() error {
	n := 0
	for _, set := range []bool{c.Rate > 0, c.Ramp != "", c.Trace != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return usageErr("--rate, --ramp and --trace exclude each other")
	case n == 1 && c.Concurrency > 0:
		return usageErr("--concurrency (closed loop) and --rate, --ramp or --trace (open loop) exclude each other (use --max-concurrency to cap an open loop)")
	case c.Ramp != "" && c.Duration <= 0:
		return usageErr("--ramp needs --duration: the ramp lasts the whole duration")
	case (c.WarmupDuration > 0 || c.CooldownDuration > 0) && c.Duration <= 0:
		return usageErr("--warmup-duration and --cooldown-duration need --duration")
	case c.WarmupDuration < 0 || c.CooldownDuration < 0 || (c.Duration > 0 && c.WarmupDuration+c.CooldownDuration >= c.Duration):
		return usageErr("--warmup-duration + --cooldown-duration must be shorter than --duration")
	case c.MaxErrors < 0:
		return usageErr("--max-errors must not be negative")
	case c.FailBelow != "" && len(c.SLO) == 0:
		return usageErr("--fail-below needs at least one --slo")
	}
	if c.Ramp != "" {
		if _, err := pacer.ParseRamp(c.Ramp, c.Duration, nil); err != nil {
			return usageErr("%v", err)
		}
	}
	if c.MaxErrorRate != "" {
		if _, err := parsePercent("--max-error-rate", c.MaxErrorRate); err != nil {
			return err
		}
	}
	if c.FailBelow != "" {
		if _, err := parsePercent("--fail-below", c.FailBelow); err != nil {
			return err
		}
	}
	_, err := parseSLOs(c.SLO)
	return err
}

// loadConfig is the load shape of the configuration: closed loop, or an open-loop schedule
// (constant/Poisson/gamma rate, ramp, or a trace whose arrivals are returned too).
func (c *runConfig) loadConfig() (load.Config, []pacer.Arrival, error) {
	lc := load.Config{Concurrency: c.Concurrency, MaxConcurrency: c.MaxConcurrency, Warmup: c.Warmup,
		Requests: c.Requests, Duration: c.Duration, Grace: c.Grace, RequestTimeout: c.RequestTimeout,
		WarmupDuration: c.WarmupDuration, CooldownDuration: c.CooldownDuration, MaxErrors: c.MaxErrors}
	if c.MaxErrorRate != "" {
		lc.MaxErrorRate, _ = parsePercent("--max-error-rate", c.MaxErrorRate)
	}
	var err error
	switch {
	case c.Rate > 0:
		if lc.Pacer, err = pacer.New(c.Arrival, c.Rate, c.Burstiness, c.Seed); err != nil {
			return lc, nil, usageErr("%v", err)
		}
	case c.Ramp != "":
		unit, err := pacer.New(c.Arrival, 1, c.Burstiness, c.Seed)
		if err != nil {
			return lc, nil, usageErr("%v", err)
		}
		if lc.Pacer, err = pacer.ParseRamp(c.Ramp, c.Duration, unit); err != nil {
			return lc, nil, usageErr("%v", err)
		}
	case c.Trace != "":
		f, err := os.Open(c.Trace)
		if err != nil {
			return lc, nil, usageErr("--trace: %v", err)
		}
		defer f.Close()
		as, err := pacer.ReadTrace(f, c.Trace)
		if err != nil {
			return lc, nil, usageErr("--trace: %v", err)
		}
		lc.Pacer = pacer.NewTrace(as)
		if lc.Requests == 0 && lc.Duration == 0 {
			lc.Requests = max(len(as)-lc.Warmup, 1)
		}
		return lc, as, c.applyShard(&lc, as)
	}
	return lc, nil, c.applyShard(&lc, nil)
}

// applyShard narrows the whole run's load shape to this process's shard (shard.go). The
// arrivals stay whole: the workload is built for the whole run, then split.
func (c *runConfig) applyShard(lc *load.Config, as []pacer.Arrival) error {
	sh, err := c.shardOf()
	if err != nil {
		return err
	}
	return sh.apply(c, lc, as)
}
