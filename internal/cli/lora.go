package cli

import (
	"github.com/spf13/pflag"

	"servebench/runspec"
)

// bindLoRAFlags registers the LoRA mix flags (runspec/lora.go).
func bindLoRAFlags(fs *pflag.FlagSet, s *runspec.Spec) {
	fs.StringVar(&s.LoRAModules, "lora-modules", s.LoRAModules, "split the traffic across LoRA adapters, `NAME[:WEIGHT],…` (e.g. a1:0.5,a2:0.3,a3:0.2; no weight = 1): each request's model field names its adapter, as vLLM serves LoRA, and the summary breaks down by adapter")
	fs.StringVar(&s.LoRASelection, "lora-selection", s.LoRASelection, "--lora-modules: random (by weight, seeded by --seed; the default, as vllm bench serve) or round-robin (in list order, weights ignored)")
}
