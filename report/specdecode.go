package report

import (
	"fmt"
	"strings"

	"servebench/metrics"
)

// specRows are the server section's speculative-decoding lines: vLLM's acceptance rate and
// mean accepted length from its counters, and ITL per chunk against ITL per token, which
// part ways when a step's accepted drafts arrive as one event. Nil without the counters.
func specRows(s *metrics.Summary) []labeled {
	d := s.Server.SpecDecode
	if d == nil {
		return nil
	}
	text := "no draft in the window"
	if d.AcceptanceRate != nil && d.MeanAcceptedLength != nil {
		text = fmt.Sprintf("acceptance rate %.1f%% (%s of %s draft tokens accepted), mean accepted length %.2f tokens per step (%s drafts)",
			fin(100**d.AcceptanceRate), trimNum(d.Accepted), trimNum(d.DraftTokens), fin(*d.MeanAcceptedLength), trimNum(d.Drafts))
		if len(d.PerPosition) > 0 {
			pos := make([]string, len(d.PerPosition))
			for i, r := range d.PerPosition {
				pos[i] = fmt.Sprintf("%.0f%%", fin(100*r))
			}
			text += "; by draft position " + strings.Join(pos, ", ")
		}
	}
	rows := []labeled{{"spec decode", text}}
	return append(rows, labeled{"ITL split", itlSplitText(s)})
}

// itlSplitText sets ITL (chunk) beside ITL (token): under speculative decoding an event
// carries a step's accepted tokens, so the per-chunk gap is a step and the per-token one
// the time each token cost.
func itlSplitText(s *metrics.Summary) string {
	if s.ITLToken.N == 0 {
		return fmt.Sprintf("ITL (chunk) p50 %s ms is per event, several tokens each; ITL (token) unknown: the server reported no per-event token counts (servebench run --continuous-usage-stats true)", msP(s.ITLChunk, 50))
	}
	per := 0.0
	if s.ITLChunk.N > 0 {
		per = float64(s.ITLToken.N) / float64(s.ITLChunk.N)
	}
	return fmt.Sprintf("ITL (token) p50 %s ms, p99 %s ms; ITL (chunk) p50 %s ms, p99 %s ms: %.2f tokens per event after the first, so ITL (token) is the per-token figure",
		msP(s.ITLToken, 50), msP(s.ITLToken, 99), msP(s.ITLChunk, 50), msP(s.ITLChunk, 99), fin(per))
}

// specJSON is the spec_decode object of server_metrics, under the names vllm bench serve
// gives these figures; nil without the counters.
func specJSON(d *metrics.SpecDecode) any {
	if d == nil {
		return nil
	}
	o := &object{}
	o.set("spec_decode_num_drafts", d.Drafts)
	o.set("spec_decode_draft_tokens", d.DraftTokens)
	o.set("spec_decode_accepted_tokens", d.Accepted)
	o.set("spec_decode_acceptance_rate", d.AcceptanceRate)
	o.set("spec_decode_acceptance_length", d.MeanAcceptedLength)
	o.set("spec_decode_per_position_acceptance_rates", d.PerPosition)
	return o
}
