package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"servebench/exitcode"
	"servebench/report"
	"servebench/runspec"
	"servebench/sweep"
)

const sweepExamples = `  # closed loop at each concurrency, one records file with a labelled run per point
  servebench sweep --url http://127.0.0.1:8000 --concurrency 1,2,4,8,16,32,64 -o sweep.jsonl

  # three runs per point: the table shows medians and how far the runs disagree
  servebench sweep --url http://127.0.0.1:8000 --concurrency 1,4,16 --repeat 3 -o sweep.jsonl

  # open loop at each rate (req/s)
  servebench sweep --url http://127.0.0.1:8000 --rate 1,2,4,8 --requests 100 -o sweep.jsonl

  # synchronous, then maximum throughput, then 4 rates between; with SLOs, a bisection for
  # the highest rate whose SLO attainment stays at or above --target-attainment
  servebench sweep --url http://127.0.0.1:8000 --auto --slo ttft=500ms --slo tpot=50ms`

func newSweepCmd(std *streams) *cobra.Command {
	flags := runspec.Default()
	sc := sweep.Default()
	var servers []string
	var serversFile string
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Run the same workload at several loads and find the saturation knee",
		Long: `Run the same workload at a list of concurrencies or rates, or --auto: synchronous (1 user),
then maximum throughput, then --points rates between them, and with --slo a bisection for the
highest rate whose SLO attainment stays at or above --target-attainment. Every point is a
labelled run in one records file; the table shows throughput against latency and goodput per
point and names the saturation knee (the lightest load reaching 90% of the peak throughput)
and the point of maximum goodput. With --repeat N every point runs N times (its figures are
medians over them). The SLO load is the highest load whose every lighter point met the SLOs;
a heavier point that met them after a miss is named, as attainment not monotonic in load.
The conclusions are stored in the records file, so servebench report prints them again.
Every other flag means what it means for run.`,
		Example: sweepExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := userSpec(cmd, &flags, "", "concurrency", "rate")
			if err != nil {
				return err
			}
			if err := sc.Validate(&s); err != nil {
				return err
			}
			ctx := cmd.Context()
			if s.ServerCmd != "" || len(servers) > 0 || serversFile != "" {
				sv, err := serverConfigs(&s, servers, serversFile, grace)
				if err != nil {
					return err
				}
				return configSweep(ctx, std, s, &sc, sv)
			}
			res, err := sweep.Run(ctx, hardStop(ctx), s, &sc, benchOptions(std, &s))
			if res != nil {
				// the code of `servebench report` on the file, so the two print the same
				if perr := report.SweepTable(std.stdout, res.Header, res.Runs); err == nil {
					err = perr
				}
				if e := res.Header.SweepEnd; err == nil && e != nil && e.Withheld != "" {
					err = codeErr(exitcode.Invalid, fmt.Errorf("INVALID sweep, its knee and SLO load withheld: %s", e.Withheld))
				}
			}
			return err
		},
	}
	// every run flag but the two that become lists
	run := pflag.NewFlagSet("run", pflag.ContinueOnError)
	bindRunFlags(run, &flags)
	run.VisitAll(func(f *pflag.Flag) {
		if f.Name != "concurrency" && f.Name != "rate" {
			cmd.Flags().AddFlag(f)
		}
	})
	fs := cmd.Flags()
	fs.IntSliceVar(&sc.Concurrency, "concurrency", nil, "closed-loop points: users per point, e.g. 1,2,4,8")
	fs.Float64SliceVar(&sc.Rates, "rate", nil, "open-loop points: req/s per point, e.g. 1,2,4,8 (arrivals per --arrival)")
	fs.BoolVar(&sc.Auto, "auto", false, "synchronous, then maximum throughput, then --points rates between (and a search with --slo)")
	fs.IntVar(&sc.Points, "points", sc.Points, "--auto: rates between synchronous and maximum throughput (0: none)")
	fs.IntVar(&sc.Steps, "search-steps", sc.Steps, "--auto with --slo: bisection steps for the highest rate meeting the SLOs (0: no search)")
	fs.StringVar(&sc.Target, "target-attainment", sc.Target, "--auto with --slo: the SLO attainment a load must keep")
	fs.StringArrayVar(&servers, "server-config", nil, "with --server-cmd: a server configuration, `\"NAME: FLAGS\"` (leading K=V words its environment), e.g. \"np4: -np 4\"; repeatable: each is started, swept over every point and stopped in turn (docs/sweeps.md)")
	fs.StringVar(&serversFile, "server-configs", "", "with --server-cmd: YAML list of server configurations, each {name, args, env}")
	fs.DurationVar(&grace, "server-grace", 10*time.Second, "with --server-cmd: how long a stopped server may take to exit after SIGTERM before it is killed")
	return cmd
}
