package metrics

import (
	"strconv"

	"servebench/record"
)

// SpecDecode is the server's speculative decoding over the window, from vLLM's spec_decode
// counters (vllm:spec_decode_num_drafts_total, _num_draft_tokens_total,
// _num_accepted_tokens_total and _num_accepted_tokens_per_pos_total{position}), each as its
// increase between the samples bracketing the window (see Server). The figures are vLLM's
// own (vllm bench serve and its metrics docs):
//
//	acceptance rate      = accepted / draft tokens
//	mean accepted length = 1 + accepted / drafts  (tokens per verification step, the bonus token included)
//	per-position rate j  = accepted at position j / drafts
type SpecDecode struct {
	Drafts, DraftTokens, Accepted float64
	AcceptanceRate                *float64 // nil without draft tokens in the window
	MeanAcceptedLength            *float64 // nil without drafts in the window
	PerPosition                   []float64
}

// specDecodeDuring reads the spec_decode counters of the first source exposing them; nil
// when none does (no speculative decoding, or not a vLLM server).
func specDecodeDuring(ok map[string][]*record.Telemetry, start, end int64) *SpecDecode {
	for _, src := range sourcesOf(ok) {
		ts := bracket(ok[src], start, end)
		drafts, found := increase(ts, "vllm:spec_decode_num_drafts_total", counterValue)
		if !found {
			continue
		}
		d := &SpecDecode{Drafts: drafts}
		d.DraftTokens, _ = increase(ts, "vllm:spec_decode_num_draft_tokens_total", counterValue)
		d.Accepted, _ = increase(ts, "vllm:spec_decode_num_accepted_tokens_total", counterValue)
		if d.DraftTokens > 0 {
			d.AcceptanceRate = ptr(d.Accepted / d.DraftTokens)
		}
		if drafts > 0 {
			d.MeanAcceptedLength = ptr(1 + d.Accepted/drafts)
			d.PerPosition = perPosition(ts, drafts)
		}
		return d
	}
	return nil
}

// perPosition is each draft position's acceptance rate, positions 0, 1, … while the server
// exposes them.
func perPosition(ts []*record.Telemetry, drafts float64) []float64 {
	var out []float64
	for pos := 0; ; pos++ {
		label := strconv.Itoa(pos)
		n, found := increase(ts, "vllm:spec_decode_num_accepted_tokens_per_pos_total", func(sr *record.Series) (float64, bool) {
			if sr.Labels["position"] != label {
				return 0, false
			}
			return counterValue(sr)
		})
		if !found {
			return out
		}
		out = append(out, n/drafts)
	}
}
