package cli

import (
	"flag"
	"fmt"

	"github.com/spf13/cobra"

	"servebench/sim"
)

const simExamples = `  servebench sim --addr 127.0.0.1:8000 --model-preset llama-3.1-8b --hardware h100
  servebench sim --addr 127.0.0.1:8000 --ttft 100ms --itl 20ms      # fixed latencies, for tests
  servebench sim --fault-rate 0.05 --seed 7                          # 5% of requests get a fault
  servebench sim --num-speculative-tokens 4 --spec-acceptance-rate 0.7   # speculative decoding
  servebench sim --lora-modules a1,a2,a3 --max-loras 2 --lora-load-time 5ms  # LoRA adapters`

func newSimCmd(std *streams) *cobra.Command {
	cfg := sim.DefaultConfig()
	gfs := flag.NewFlagSet("sim", flag.ContinueOnError)
	sim.BindFlags(gfs, &cfg)
	cmd := &cobra.Command{
		Use:     "sim",
		Short:   "Run the built-in simulated LLM server (OpenAI-compatible, streaming)",
		Example: simExamples,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Validate(); err != nil {
				return usageErr("%v", err)
			}
			s, err := sim.New(cfg)
			if err != nil {
				return usageErr("%v", err)
			}
			url, err := s.Start(cfg.Addr)
			if err != nil {
				return err
			}
			defer s.Close()
			fmt.Fprintf(std.stderr, "servebench SIMULATED server listening on %s (Ctrl-C to stop)\n", url)
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.Flags().AddGoFlagSet(gfs)
	return cmd
}
