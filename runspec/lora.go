package runspec

import (
	"strings"

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
