package bench

// assignAdapters gives each request of every part its LoRA adapter from --lora-modules
// (workload.LoRAMix.Assign): seeded per part, so a repeat set's runs each draw their own
// mix and a replay draws the same. Requests that already name one (a prompts file's
// "adapter", a --like baseline's embedded workload) keep it.
func (b *Session) assignAdapters() {
	mix := b.spec.LoRAMix()
	for i := range b.parts {
		mix.Assign(b.parts[i].reqs, b.spec.Seed, i)
	}
}
