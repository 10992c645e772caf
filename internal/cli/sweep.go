package cli

import (
	"context"
	"fmt"
	"math"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"servebench/load"
	"servebench/load/pacer"
	"servebench/metrics"
	"servebench/record"
)

const sweepExamples = `  # closed loop at each concurrency, one records file with a labelled run per point
  servebench sweep --url http://127.0.0.1:8000 --concurrency 1,2,4,8,16,32,64 -o sweep.jsonl

  # open loop at each rate (req/s)
  servebench sweep --url http://127.0.0.1:8000 --rate 1,2,4,8 --requests 100 -o sweep.jsonl

  # synchronous, then maximum throughput, then 4 rates between; with SLOs, a bisection for
  # the highest rate whose SLO attainment stays at or above --target-attainment
  servebench sweep --url http://127.0.0.1:8000 --auto --slo ttft=500ms --slo tpot=50ms`

// sweepConfig is what `servebench sweep` adds to the run flags.
type sweepConfig struct {
	concurrency []int
	rates       []float64
	auto        bool
	points      int    // --auto: rates between synchronous and maximum throughput
	steps       int    // --auto with SLOs: bisection steps
	target      string // --auto with SLOs: attainment to keep
}

func newSweepCmd(std *streams) *cobra.Command {
	cfg := defaultRunConfig()
	sc := sweepConfig{points: 4, steps: 3, target: "99%"}
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run the same workload at several loads and find the saturation knee",
		Long: `Run the same workload at a list of concurrencies or rates, or --auto: synchronous (1 user),
then maximum throughput, then --points rates between them, and with --slo a bisection for the
highest rate whose SLO attainment stays at or above --target-attainment. Every point is a
labelled run in one records file; the table shows throughput against latency and goodput per
point and names the saturation knee (the lightest load reaching 90% of the peak throughput)
and the point of maximum goodput. Every other flag means what it means for run.`,
		Example: sweepExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := effectiveRunConfig(cmd, &cfg, "")
			if err != nil {
				return err
			}
			if err := sc.validate(c, cmd.Flags().Changed("warmup")); err != nil {
				return err
			}
			return runSweep(cmd.Context(), std, c, &sc)
		},
	}
	// every run flag but the two that become lists
	run := pflag.NewFlagSet("run", pflag.ContinueOnError)
	bindRunFlags(run, &cfg)
	run.VisitAll(func(f *pflag.Flag) {
		if f.Name != "concurrency" && f.Name != "rate" {
			cmd.Flags().AddFlag(f)
		}
	})
	fs := cmd.Flags()
	fs.IntSliceVar(&sc.concurrency, "concurrency", nil, "closed-loop points: users per point, e.g. 1,2,4,8")
	fs.Float64SliceVar(&sc.rates, "rate", nil, "open-loop points: req/s per point, e.g. 1,2,4,8 (arrivals per --arrival)")
	fs.BoolVar(&sc.auto, "auto", false, "synchronous, then maximum throughput, then --points rates between (and a search with --slo)")
	fs.IntVar(&sc.points, "points", sc.points, "--auto: rates between synchronous and maximum throughput")
	fs.IntVar(&sc.steps, "search-steps", sc.steps, "--auto with --slo: bisection steps for the highest rate meeting the SLOs")
	fs.StringVar(&sc.target, "target-attainment", sc.target, "--auto with --slo: the SLO attainment a load must keep")
	return cmd
}

// validate checks the sweep flags against the run configuration.
func (sc *sweepConfig) validate(c *runConfig, warmupGiven bool) error {
	modes := 0
	for _, set := range []bool{len(sc.concurrency) > 0, len(sc.rates) > 0, sc.auto} {
		if set {
			modes++
		}
	}
	switch {
	case modes != 1:
		return usageErr("give exactly one of --concurrency LIST, --rate LIST or --auto")
	case c.Ramp != "" || c.Trace != "":
		return usageErr("--ramp and --trace are one run's schedule: use servebench run")
	case c.FailBelow != "":
		return usageErr("--fail-below gates one run (servebench run); a sweep searches with --target-attainment")
	case sc.points < 0 || sc.steps < 0:
		return usageErr("--points and --search-steps must not be negative")
	}
	for _, n := range sc.concurrency {
		if n < 1 {
			return usageErr("--concurrency %d: every point needs at least 1 user", n)
		}
	}
	for _, r := range sc.rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return usageErr("--rate %v: every point needs a positive rate", r)
		}
	}
	if !warmupGiven {
		c.Warmup = -1 // per point: one request per concurrency slot
	}
	c.Concurrency, c.Rate = 0, 0 // per point; not one value for the file
	_, err := parsePercent("--target-attainment", sc.target)
	return err
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

// sweepRow is one finished point.
type sweepRow struct {
	pt  point
	run int
	sum *metrics.Summary
}

// sweeper runs the points of one sweep against one target and workload, into one file.
type sweeper struct {
	b    *bench
	sc   *sweepConfig
	base load.Config
	rows []sweepRow
}

// runSweep is `servebench sweep`: set up once, run every point, print the table.
func runSweep(ctx context.Context, std *streams, cfg *runConfig, sc *sweepConfig) error {
	b := &bench{io: std, cfg: cfg}
	defer b.close()
	cfg.EmbedPrompts = false // a sweep's header carries no workload (it cannot be --like'd)
	if cfg.NumPrompts == 0 && cfg.Requests > 0 {
		cfg.NumPrompts = cfg.Requests + max(16, slicesMax(sc.concurrency)) // cycled beyond
	}
	steps := []func() error{b.openOutput, func() error { return b.startTarget(ctx) }, b.prepareLoad,
		func() error { return b.buildWorkload(ctx) }}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	b.hdr.Label = "sweep"
	b.hdr.Sweep = map[bool]string{true: "auto", false: "concurrency"}[sc.auto]
	if len(sc.rates) > 0 {
		b.hdr.Sweep = "rate"
	}
	if err := b.begin(); err != nil {
		return err
	}
	sw := &sweeper{b: b, sc: sc, base: b.lc}
	var err error
	if sc.auto {
		err = sw.auto(ctx)
	} else {
		err = sw.list(ctx)
	}
	if serr := b.out.Sync(); err == nil && serr != nil {
		err = fmt.Errorf("records file: %w", serr)
	}
	if len(sw.rows) > 0 {
		sw.printTable(std.stdout)
	}
	b.logf("records: %s", cfg.Output)
	return err
}

func slicesMax(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// list runs the listed concurrencies or rates in order.
func (sw *sweeper) list(ctx context.Context) error {
	var pts []point
	for _, n := range sw.sc.concurrency {
		pts = append(pts, point{users: n})
	}
	for _, r := range sw.sc.rates {
		pts = append(pts, point{rate: r})
	}
	for i, p := range pts {
		if _, err := sw.run(ctx, p, fmt.Sprintf("point %d/%d %s", i+1, len(pts), p.label())); err != nil {
			return err
		}
	}
	return nil
}

// run runs one point as the next run of the file and keeps its row.
func (sw *sweeper) run(ctx context.Context, p point, progress string) (*metrics.Summary, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	lc, err := sw.loadFor(p)
	if err != nil {
		return nil, err
	}
	k := len(sw.rows)
	sw.b.logf("%s", progress)
	end := record.RunEnd{Run: k, Label: p.label(), Concurrency: p.users, Rate: p.rate}
	sum, err := sw.b.runPoint(ctx, lc, end, progress)
	if err != nil {
		return nil, err
	}
	sw.rows = append(sw.rows, sweepRow{pt: p, run: k, sum: sum})
	return sum, nil
}

// loadFor is the load configuration of one point: the run flags with its users or rate.
func (sw *sweeper) loadFor(p point) (load.Config, error) {
	lc := sw.base
	cfg := sw.b.cfg
	lc.Concurrency, lc.Pacer = p.users, nil
	if p.rate > 0 {
		pc, err := pacer.New(cfg.Arrival, p.rate, cfg.Burstiness, cfg.Seed)
		if err != nil {
			return lc, usageErr("%v", err)
		}
		lc.Pacer, lc.Concurrency = pc, 0
	}
	if cfg.Warmup < 0 {
		c := *cfg
		c.Concurrency, c.Rate = p.users, p.rate
		lc.Warmup = c.defaultWarmup()
	}
	return lc, nil
}
