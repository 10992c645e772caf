package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// LoRA selections: how a LoRA mix picks each request's adapter.
const (
	LoRARandom     = "random"      // weighted random, seeded (vllm bench serve picks uniformly at random)
	LoRARoundRobin = "round-robin" // in list order, weights ignored (AIPerf's round_robin)
)

// LoRAMix is the LoRA adapters a run's traffic is split across (--lora-modules
// a1:0.5,a2:0.3,a3:0.2): each request's model field names one adapter, as vLLM serves
// LoRA. Weights are relative (they need not add up to 1); an adapter without one weighs 1.
type LoRAMix struct {
	Names     []string
	Weights   []float64
	Selection string // LoRARandom or LoRARoundRobin
}

// ParseLoRAMix parses a comma-separated list of NAME or NAME:WEIGHT and a selection ("" is
// random). An empty list is no mix.
func ParseLoRAMix(list, selection string) (LoRAMix, error) {
	m := LoRAMix{Selection: selection}
	if m.Selection == "" {
		m.Selection = LoRARandom
	}
	if m.Selection != LoRARandom && m.Selection != LoRARoundRobin {
		return m, fmt.Errorf("selection %q: want %s or %s", selection, LoRARandom, LoRARoundRobin)
	}
	if strings.TrimSpace(list) == "" {
		return m, nil
	}
	for _, f := range strings.Split(list, ",") {
		name, w, hasW := strings.Cut(strings.TrimSpace(f), ":")
		weight := 1.0
		if hasW {
			v, err := strconv.ParseFloat(w, 64)
			if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return m, fmt.Errorf("%q: the weight must be a positive number", f)
			}
			weight = v
		}
		switch {
		case name == "":
			return m, fmt.Errorf("%q: empty adapter name", f)
		case slices.Contains(m.Names, name):
			return m, fmt.Errorf("adapter %q given twice", name)
		}
		m.Names, m.Weights = append(m.Names, name), append(m.Weights, weight)
	}
	return m, nil
}

// Empty reports a mix without adapters.
func (m LoRAMix) Empty() bool { return len(m.Names) == 0 }

// Shares are the adapters' weights as shares of 1.
func (m LoRAMix) Shares() []float64 { return Shares(m.Weights) }

// Shares normalises finite positive weights to shares of 1 without overflow: each weight is
// first divided by the largest, so the sum is at most len(ws) (weights of 1e308 would sum to
// +Inf, and every share but the last would round to 0).
func Shares(ws []float64) []float64 {
	top := 0.0
	for _, w := range ws {
		top = max(top, w)
	}
	out := make([]float64, len(ws))
	if !(top > 0) || math.IsInf(top, 0) {
		return out
	}
	var sum float64
	for i, w := range ws {
		out[i] = w / top
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// String is the mix as the flag takes it, with the shares: "a1:0.5,a2:0.3,a3:0.2".
func (m LoRAMix) String() string {
	parts := make([]string, len(m.Names))
	for i, s := range m.Shares() {
		parts[i] = m.Names[i] + ":" + strconv.FormatFloat(s, 'g', 4, 64)
	}
	return strings.Join(parts, ",")
}

// Assign sets the Adapter of every request of one part of a run that has none (a prompts
// file may name its own): by round robin in request order, or drawn by weight from a
// generator seeded by seed and part, so a run's mix is reproducible and each part of a
// repeat set draws its own. A multi-turn session keeps one adapter for all its turns (it is
// one conversation with one fine-tune), picked by its session number.
func (m LoRAMix) Assign(reqs []Request, seed int64, part int) {
	if m.Empty() {
		return
	}
	shares := m.Shares()
	rng := rand.New(rand.NewPCG(uint64(seed), 0x10_4a00+uint64(part)))
	bySession := map[int]string{}
	n := 0 // requests (or sessions) picked so far
	for i := range reqs {
		r := &reqs[i]
		if r.Adapter != "" {
			continue
		}
		if r.Session > 0 {
			if a, ok := bySession[r.Session]; ok {
				r.Adapter = a
				continue
			}
		}
		r.Adapter = m.pick(n, rng, shares)
		n++
		if r.Session > 0 {
			bySession[r.Session] = r.Adapter
		}
	}
}

func (m LoRAMix) pick(n int, rng *rand.Rand, shares []float64) string {
	if m.Selection == LoRARoundRobin {
		return m.Names[n%len(m.Names)]
	}
	u := rng.Float64()
	for i, s := range shares {
		if u < s {
			return m.Names[i]
		}
		u -= s
	}
	return m.Names[len(m.Names)-1] // rounding left u just above the last share
}
