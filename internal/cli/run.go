package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"servebench/bench"
	"servebench/internal/progress"
	"servebench/output"
	"servebench/record"
	"servebench/report"
	"servebench/runspec"
)

const runExamples = `  # the built-in simulator, default workload (512 in / 128 out, 200 requests, 16 users)
  servebench run

  # a real server, closed loop of 16 users
  servebench run --url http://127.0.0.1:8000 --api openai-completions \
      --input-tokens 512 --output-tokens 128 --requests 200 --concurrency 16 --seed 1 \
      -o baseline.jsonl --json baseline.json

  # open loop: Poisson arrivals at 8 req/s, at most 64 in flight, for two minutes
  servebench run --url http://127.0.0.1:8000 --rate 8 --max-concurrency 64 --duration 2m`

func newRunCmd(std *streams) *cobra.Command {
	flags := runspec.Default()
	var configPath string
	cmd := &cobra.Command{
		Use:     "run",
		Short:   "Benchmark a server (default: the built-in simulator) and write a records file",
		Example: runExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			user, err := userSpec(cmd, &flags, configPath)
			if err != nil {
				return err
			}
			s, like, err := user.ToRun()
			if err != nil {
				return err
			}
			return runRun(cmd.Context(), std, s, like)
		},
	}
	bindRunFlags(cmd.Flags(), &flags)
	cmd.Flags().StringVar(&configPath, "config", "", "YAML file with the same keys as the flags (flags override it)")
	return cmd
}

// benchOptions are the orchestrator's options for a command's streams and spec.
func benchOptions(std *streams, s *runspec.Spec) bench.Options {
	opt := bench.Options{Version: Version, Args: std.args, Slow: std.stderr}
	if !s.Quiet {
		opt.Log = std.stderr
		opt.Progress = progress.New(std.stderr)
	}
	return opt
}

// runRun is `servebench run`: the run, then its summary (the same code as `servebench
// report`), --json, and the SLO gate.
func runRun(ctx context.Context, std *streams, s runspec.Spec, like *runspec.Base) error {
	if s.ServerCmd != "" {
		return runServer(ctx, std, s, like) // servers.go
	}
	return runBench(ctx, std, s, like, nil)
}

// runBench is runRun against a server that answers at s.URL (or the simulator), with the
// observations of how it was started.
func runBench(ctx context.Context, std *streams, s runspec.Spec, like *runspec.Base, observed []record.Condition) error {
	opt := benchOptions(std, &s)
	opt.Like, opt.Observed = like, observed
	res, err := bench.Run(ctx, hardStop(ctx), s, opt)
	if res == nil {
		return err
	}
	if perr := report.Render(std.stdout, "text", report.Input{Header: res.Header, Summaries: res.Runs, Explain: s.Explain}); perr != nil && err == nil {
		err = perr
	}
	if s.JSON != "" {
		jerr := output.WriteFile(s.JSON, nil, func(w io.Writer) error {
			return report.Render(w, "json", report.Input{Header: res.Header, Summaries: res.Runs})
		})
		if jerr != nil && err == nil {
			err = fmt.Errorf("--json: %w", jerr)
		}
	}
	if opt.Log != nil {
		fmt.Fprintf(opt.Log, "records: %s\n", res.Output)
	}
	msg, verr := bench.Verdict(s.FailBelow, res)
	if msg != "" && opt.Log != nil {
		fmt.Fprintln(opt.Log, msg)
	}
	if err == nil {
		err = verr
	}
	return err
}
