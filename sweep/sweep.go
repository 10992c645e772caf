// Package sweep runs one workload at several loads into one records file and finds the
// saturation knee: a list of concurrencies or rates, or --auto (GuideLLM's sweep profile:
// synchronous, maximum throughput, rates between, and with SLOs a bisection for the highest
// rate that keeps its SLO attainment).
package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"servebench/bench"
	"servebench/load"
	"servebench/load/pacer"
	"servebench/metrics"
	"servebench/record"
	"servebench/runspec"
)

// Config is what a sweep adds to the run spec.
type Config struct {
	Concurrency []int     // closed-loop points: users per point
	Rates       []float64 // open-loop points: req/s per point
	Auto        bool
	Points      int    // Auto: rates between synchronous and maximum throughput
	Steps       int    // Auto with SLOs: bisection steps
	Target      string // Auto with SLOs: attainment to keep, e.g. 99%
}

// Default is the sweep's defaults.
func Default() Config { return Config{Points: 4, Steps: 3, Target: "99%"} }

// Validate checks the sweep settings against the run spec s (which must not set one load).
func (c *Config) Validate(s *runspec.Spec) error {
	modes := 0
	for _, set := range []bool{len(c.Concurrency) > 0, len(c.Rates) > 0, c.Auto} {
		if set {
			modes++
		}
	}
	switch {
	case modes != 1:
		return runspec.Usagef("give exactly one of --concurrency LIST, --rate LIST or --auto")
	case s.Ramp != "" || s.Trace != "":
		return runspec.Usagef("--ramp and --trace are one run's schedule: use servebench run")
	case s.FailBelow != "":
		return runspec.Usagef("--fail-below gates one run (servebench run); a sweep searches with --target-attainment")
	case c.Points < 0 || c.Steps < 0:
		return runspec.Usagef("--points and --search-steps must not be negative")
	}
	for _, n := range c.Concurrency {
		if n < 1 {
			return runspec.Usagef("--concurrency %d: every point needs at least 1 user", n)
		}
	}
	for _, r := range c.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return runspec.Usagef("--rate %v: every point needs a positive rate", r)
		}
	}
	_, err := metrics.ParseShare("--target-attainment", c.Target)
	return runspec.Usage(err)
}

// point is one load of a sweep: closed loop (users) or open loop (rate).
type point struct {
	users int
	rate  float64
	kind  string // "" | "synchronous" | "throughput" | "search"
}

func (p point) label() string {
	s := fmt.Sprintf("rate %.3g req/s", p.rate)
	if p.users > 0 {
		s = fmt.Sprintf("concurrency %d", p.users)
	}
	if p.kind != "" && p.kind != "search" {
		s = p.kind + " (" + s + ")"
	}
	return s
}

// errInterrupted stops a sweep at its next run once sending was interrupted (Ctrl-C).
var errInterrupted = errors.New("sweep interrupted")

// pointRun is one finished point: its load and its runs (one, or --repeat of them).
type pointRun struct {
	pt point
	ps metrics.PointSummary
}

// sweeper runs the points of one sweep against one target and workload, into one file.
type sweeper struct {
	b         *bench.Session
	c         *Config
	spec      runspec.Spec
	base      load.Config
	pts       []*pointRun
	runs      int // runs written so far: the next run's index
	ctx, hard context.Context
	log       io.Writer
}

// Run is `servebench sweep`: set up once (spec s unresolved as the user gave it), run every
// point --repeat times, and write the sweep's conclusions as the file's sweep-end line. Every
// point's warmup is one request per concurrency slot unless s sets --warmup. The Result is
// returned whenever a point finished, also with an error; its header holds the conclusions
// (Header.SweepEnd), which report.SweepTable prints.
func Run(ctx, hard context.Context, s runspec.Spec, c *Config, opt bench.Options) (*bench.Result, error) {
	s.EmbedPrompts = false // a sweep's header carries no workload (it cannot be --like'd)
	// every point sends prompts of its own (bench builds a part per point); each point's
	// warmup, one request per user unless --warmup is set, takes the part's warmup prompts
	r := s.Resolve()
	if !s.IsSet("warmup") {
		// as many warmup prompts as the most users of any point: a point that warmed with
		// fewer cycled them, and the repeats were served from the server's prefix cache (a
		// 40-user throughput point on 16 prompts warmed at 25 req/s, then measured 11-19)
		most := slices.Max(append([]int{0}, c.Concurrency...))
		if c.Auto {
			most = peakUsers(s, r.Requests)
		}
		opt.WarmPrompts = max(16, most)
	}
	r.Concurrency, r.Rate = 0, 0 // per point; not one value for the file
	opt.Sweep = map[bool]string{true: "auto", false: "concurrency"}[c.Auto]
	if len(c.Rates) > 0 {
		opt.Sweep = "rate"
	}
	b, err := bench.Open(ctx, r, opt)
	if err != nil {
		return nil, err
	}
	b.Header().Label = "sweep"
	if err := b.Begin(ctx); err != nil {
		b.Close()
		return nil, err
	}
	sw := &sweeper{b: b, c: c, spec: s, base: b.Load(), ctx: ctx, hard: hard, log: opt.Log}
	if c.Auto {
		err = sw.auto()
	} else {
		err = sw.list()
	}
	if errors.Is(err, errInterrupted) {
		err = nil // as run does: an interrupt stops sending, and what finished is the result
	}
	if len(sw.pts) > 0 {
		// the conclusions go into the file, so that report prints what sweep printed
		if werr := b.WriteSweepEnd(sw.conclude(err != nil || ctx.Err() != nil)); err == nil {
			err = werr
		}
	}
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if opt.Log != nil {
		fmt.Fprintf(opt.Log, "records: %s\n", b.Output())
	}
	if len(sw.pts) == 0 {
		return nil, err
	}
	return &bench.Result{Header: b.Header(), Runs: b.Runs(), Output: b.Output()}, err
}

// list runs the listed concurrencies or rates in order.
func (sw *sweeper) list() error {
	var pts []point
	for _, n := range sw.c.Concurrency {
		pts = append(pts, point{users: n})
	}
	for _, r := range sw.c.Rates {
		pts = append(pts, point{rate: r})
	}
	for i, p := range pts {
		if _, err := sw.run(p, fmt.Sprintf("point %d/%d %s", i+1, len(pts), p.label())); err != nil {
			return err
		}
	}
	return nil
}

// run runs one point --repeat times, as the next runs of the file, and keeps it. Each run
// is labelled with its point and, with --repeat, its repeat; a point is kept with the runs
// it finished when one fails.
func (sw *sweeper) run(p point, progress string) (*pointRun, error) {
	n := max(1, sw.spec.Repeat)
	pr := &pointRun{pt: p, ps: metrics.PointSummary{Label: p.label(), Concurrency: p.users, Rate: p.rate}}
	var err error
	for i := range n {
		label, prog := p.label(), progress
		if n > 1 {
			label += fmt.Sprintf(", repeat %d/%d", i+1, n)
			prog += fmt.Sprintf(", repeat %d/%d", i+1, n)
		}
		if err = sw.runOnce(p, label, prog, &pr.ps); err != nil {
			break
		}
	}
	if len(pr.ps.Runs) > 0 {
		sw.pts = append(sw.pts, pr)
	}
	return pr, err
}

// runOnce runs one run of point p and adds it to ps.
func (sw *sweeper) runOnce(p point, label, progress string, ps *metrics.PointSummary) error {
	if sw.ctx.Err() != nil {
		return errInterrupted
	}
	lc, err := sw.loadFor(p)
	if err != nil {
		return err
	}
	k := sw.runs
	sw.logf("%s", progress)
	end := record.RunEnd{Run: k, Label: label, Concurrency: p.users, Rate: p.rate}
	sum, err := sw.b.RunPoint(sw.ctx, sw.hard, lc, end, progress)
	if errors.Is(err, bench.ErrNotBegun) {
		return errInterrupted // stopped while the point's prompts were built: no run
	}
	sw.runs++
	if sum != nil { // its run-end line is written: the run is in the file
		ps.Runs = append(ps.Runs, metrics.RunSummary{Run: k, Label: label, Summary: sum})
	}
	return err
}

func (sw *sweeper) logf(format string, a ...any) {
	if sw.log != nil {
		fmt.Fprintf(sw.log, format+"\n", a...)
	}
}

// loadFor is the load configuration of one point: the run settings with its users or rate.
func (sw *sweeper) loadFor(p point) (load.Config, error) {
	lc := sw.base
	s := sw.spec
	lc.Concurrency, lc.Pacer = p.users, nil
	if p.rate > 0 {
		pc, err := pacer.New(s.Arrival, p.rate, s.Burstiness, s.Seed)
		if err != nil {
			return lc, runspec.Usage(err)
		}
		lc.Pacer, lc.Concurrency = pc, 0
	}
	if !s.IsSet("warmup") {
		s.Concurrency, s.Rate = p.users, p.rate
		lc.Warmup = s.DefaultWarmup()
		if p.users > 0 {
			lc.Warmup = p.users // one per user: the throughput point's users are all its requests
		}
	}
	return lc, nil
}
