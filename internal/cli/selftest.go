package cli

import (
	"github.com/spf13/cobra"

	"servebench/selftest"
)

const selftestExamples = `  # the README table: as fast as possible, then 20 events/s per stream, at 1 to 4,096 streams
  servebench selftest

  # one point, paced like a 50 ms ITL server, as JSON
  servebench selftest --points 1024 --itl 50ms --json`

func newSelftestCmd(std *streams) *cobra.Command {
	c := selftest.Default()
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Measure servebench's own overhead and timestamp accuracy against a simulator in a separate process",
		Long: `selftest starts the simulator in a separate process (so that servebench's own CPU is
measured apart from the server's), drives it through the real load path of servebench run at each
concurrency point, and reports per point: content events/s ingested, client CPU per event, and the
timestamp error (client arrival − simulator write time, from the simulator's truth log) p50/p99/max,
the TTFT error (client TTFT − the simulator's own, from reading the request's first bytes to
writing the first token) p50/p99/max, and the ITL error (|client ITL − simulator ITL|) p99.`,
		Example: selftestExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.Validate(); err != nil {
				return err
			}
			return selftest.Run(cmd.Context(), &c, std.stdout, std.stderr)
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&c.Points, "points", c.Points, "concurrent streams of each point")
	f.DurationSliceVar(&c.ITLs, "itl", c.ITLs, "simulator inter-token latency of each mode (0: as fast as it can)")
	f.DurationVar(&c.TTFT, "ttft", c.TTFT, "simulator time to first token")
	f.IntVar(&c.Tokens, "tokens", c.Tokens, "output tokens per request")
	f.IntVar(&c.Rounds, "rounds", c.Rounds, "measured requests per stream at each point (after one warmup request each)")
	f.BoolVar(&c.Sync, "sync", c.Sync, "no jitter: every stream emits at the same instants (default: ±ITL/2 jitter)")
	f.StringVar(&c.ArrivalClock, "arrival-clock", c.ArrivalClock, "how servebench stamps events, as in run: kernel (receive time) or read (when read)")
	f.StringVar(&c.SendClock, "send-clock", c.SendClock, "how servebench stamps requests sent, as in run: kernel (transmit time) or write (when the write returned)")
	f.BoolVar(&c.JSON, "json", c.JSON, "print the results as JSON instead of a table")
	f.StringVar(&c.Dir, "dir", c.Dir, "keep the records and truth files in this directory (default: a temporary one, removed)")
	f.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the client to this file")
	_ = f.MarkHidden("cpuprofile")
	return cmd
}
