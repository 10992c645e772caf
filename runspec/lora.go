package runspec

import (
	"strings"

	"github.com/spf13/pflag"

	"servebench/workload"
)

// LoRA: --lora-modules splits a run's traffic across LoRA adapters, each request's model
// field naming one (vllm bench serve's --lora-modules, with a weight per adapter), and
// --lora-selection picks them at random by weight (vLLM's way, seeded here) or in turn
// (AIPerf's round_robin model selection).

// LoRAMix is the run's adapter mix (empty without --lora-modules). Call it after Validate.
func (s *Spec) LoRAMix() workload.LoRAMix {
	m, _ := workload.ParseLoRAMix(s.LoRAModules, s.LoRASelection)
	return m
}

func (s *Spec) validateLoRA() error {
	switch sel := s.LoRASelection; {
	case sel != "" && sel != workload.LoRARandom && sel != workload.LoRARoundRobin:
		return Usagef("--lora-selection %q: want %s or %s", sel, workload.LoRARandom, workload.LoRARoundRobin)
	case sel != "" && strings.TrimSpace(s.LoRAModules) == "":
		return Usagef("--lora-selection needs --lora-modules")
	}
	if _, err := workload.ParseLoRAMix(s.LoRAModules, s.LoRASelection); err != nil {
		return Usagef("--lora-modules %q: %v", s.LoRAModules, err)
	}
	return nil
}

// bindLoRAFlags registers the LoRA mix flags (runspec/lora.go).
func bindLoRAFlags(fs *pflag.FlagSet, s *Spec) {
	fs.StringVar(&s.LoRAModules, "lora-modules", s.LoRAModules, "split the traffic across LoRA adapters, `NAME[:WEIGHT],…` (e.g. a1:0.5,a2:0.3,a3:0.2; no weight = 1): each request's model field names its adapter, as vLLM serves LoRA, and the summary breaks down by adapter")
	fs.StringVar(&s.LoRASelection, "lora-selection", s.LoRASelection, "--lora-modules: random (by weight, seeded by --seed; the default, as vllm bench serve) or round-robin (in list order, weights ignored)")
}
