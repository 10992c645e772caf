package sim

import (
	"errors"
	"flag"
	"math"
	"strconv"
	"sync/atomic"
)

// Speculative decoding (vLLM --speculative-config num_speculative_tokens=k): every decode
// step of a running sequence verifies k draft tokens plus its last token in one forward pass
// (k+1 tokens of compute and KV, from the step's token budget), keeps the accepted prefix of
// the drafts and samples one more token, so one step emits 1 to k+1 tokens and the stream
// sends them as one event. Rejected drafts' KV is dropped at once.
//
// The acceptance rate α is vLLM's: accepted draft tokens / draft tokens, the ratio its
// counters give. Drafts are accepted in order until the first rejection, each position with
// the same probability p, so position j (from 1) is accepted with probability p^j and
// α = (p + p² + … + p^k)/k; p is solved from α (specProb). One uniform u per draft decides
// the accepted count (#{j : u < p^j}, the inverse of that distribution), and the uniforms
// are a golden-ratio sequence from a seeded start rather than independent draws: its
// empirical distribution converges like log(n)/n instead of 1/√n, so the counters' ratio is
// within 1% of α after a few hundred drafts, where independent draws need ~20,000.

// specDecoder draws each draft's accepted count and keeps vLLM's spec_decode counters. The
// engine goroutine draws; /metrics reads the atomics.
type specDecoder struct {
	k int     // draft tokens per step
	p float64 // per-position acceptance probability
	u float64 // the last uniform of the sequence

	drafts, draftTokens, accepted atomic.Int64
	perPos                        []atomic.Int64 // drafts whose position j (from 0) was accepted
}

// golden is the fractional part of the golden ratio: the additive recurrence u += golden
// (mod 1) is the most evenly spread one-dimensional sequence.
const golden = 0.6180339887498949

func newSpecDecoder(k int, alpha float64, seed int64) *specDecoder {
	if k <= 0 {
		return nil
	}
	return &specDecoder{k: k, p: specProb(k, alpha), u: float64(mix64(uint64(seed)^0x5bec)>>11) / (1 << 53),
		perPos: make([]atomic.Int64, k)}
}

// specProb solves α = (p + … + p^k)/k for p in [0, 1] by bisection (the right side rises
// with p from 0 to 1).
func specProb(k int, alpha float64) float64 {
	lo, hi := 0.0, 1.0
	for range 60 {
		p := (lo + hi) / 2
		sum, pj := 0.0, 1.0
		for range k {
			pj *= p
			sum += pj
		}
		if sum/float64(k) < alpha {
			lo = p
		} else {
			hi = p
		}
	}
	return (lo + hi) / 2
}

// draw verifies one draft of k tokens and returns the tokens the step emits: the accepted
// drafts plus the one sampled after them.
func (d *specDecoder) draw() int {
	d.u += golden
	if d.u >= 1 {
		d.u--
	}
	a := 0
	for pj := d.p; a < d.k && d.u < pj; pj *= d.p {
		d.perPos[a].Add(1)
		a++
	}
	// accepted before drafts: a scrape never sees more accepted than drafted tokens
	d.accepted.Add(int64(a))
	d.draftTokens.Add(int64(d.k))
	d.drafts.Add(1)
	return 1 + a
}

// take is the tokens a step emits for q: one at the end of a prefill (no draft yet), 1+a
// for a decode step; without speculative decoding, q's chunk.
func (d *specDecoder) take(q *seq, decode bool) int {
	switch {
	case d == nil:
		return q.chunk
	case !decode:
		return 1
	}
	return d.draw()
}

// writeSpecDecode renders vLLM's spec_decode counters (only with speculative decoding on,
// as vLLM exports them).
func (p *promWriter) writeSpecDecode(d *specDecoder) {
	if d == nil {
		return
	}
	p.metric("vllm:spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.", float64(d.drafts.Load()))
	p.metric("vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.", float64(d.draftTokens.Load()))
	p.metric("vllm:spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.", float64(d.accepted.Load()))
	p.header("vllm:spec_decode_num_accepted_tokens_per_pos_total", "counter", "Accepted tokens per draft position.")
	for i := range d.perPos {
		p.sample("vllm:spec_decode_num_accepted_tokens_per_pos_total", `,position="`+strconv.Itoa(i)+`"`, float64(d.perPos[i].Load()))
	}
}

// bindSpecFlags registers the speculative-decoding flags.
func bindSpecFlags(fs *flag.FlagSet, c *Config) {
	fs.IntVar(&c.SpecTokens, "num-speculative-tokens", c.SpecTokens, "speculative decoding: draft tokens verified per decode step, k (vLLM's num_speculative_tokens; 0 = off)")
	fs.Float64Var(&c.SpecAcceptance, "spec-acceptance-rate", c.SpecAcceptance, "speculative decoding: accepted / draft tokens, as vLLM's counters give it (0 to 1)")
}

func (c *Config) validateSpec() error {
	if c.SpecTokens < 0 || c.SpecTokens > 64 {
		return errors.New("--num-speculative-tokens must be in [0, 64], got " + strconv.Itoa(c.SpecTokens))
	}
	if math.IsNaN(c.SpecAcceptance) || c.SpecAcceptance < 0 || c.SpecAcceptance > 1 {
		return errors.New("--spec-acceptance-rate must be in [0, 1], got " + ftoa(c.SpecAcceptance))
	}
	return nil
}

// describeSpec adds the speculative-decoding settings to the conditions.
func (c *Config) describeSpec(d map[string]string) {
	if c.SpecTokens > 0 {
		d["num_speculative_tokens"] = strconv.Itoa(c.SpecTokens)
		d["spec_acceptance_rate"] = ftoa(c.SpecAcceptance)
	}
}
