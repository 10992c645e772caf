package metrics

import (
	"math"
	"testing"

	"servebench/record"
)

// TestSpecDecodeDuring: vLLM's figures from the counters' increases over the window: the
// acceptance rate, the mean accepted length and the rate per position; nothing without them.
func TestSpecDecodeDuring(t *testing.T) {
	sample := func(at int64, drafts, drafted, accepted float64, perPos ...float64) record.Telemetry {
		c := func(name string, v float64, labels map[string]string) record.Series {
			return record.Series{Name: name, Type: "counter", Value: &v, Labels: labels}
		}
		s := record.Telemetry{T: at, Source: "http://x/metrics", OK: true, Series: []record.Series{
			c("vllm:spec_decode_num_drafts_total", drafts, nil),
			c("vllm:spec_decode_num_draft_tokens_total", drafted, nil),
			c("vllm:spec_decode_num_accepted_tokens_total", accepted, nil)}}
		for j, v := range perPos {
			s.Series = append(s.Series, c("vllm:spec_decode_num_accepted_tokens_per_pos_total", v, map[string]string{"position": string(rune('0' + j))}))
		}
		return s
	}
	// before the window: 10 drafts already; in it, 100 drafts of 3 tokens, 180 accepted
	samples := []record.Telemetry{sample(0, 10, 30, 20, 9, 7, 4), sample(2e9, 110, 330, 200, 89, 62, 49)}
	s := ServerDuring(samples, 1e9, 1.5e9, nil)
	d := s.SpecDecode
	if d == nil || d.Drafts != 100 || d.DraftTokens != 300 || d.Accepted != 180 {
		t.Fatalf("spec decode %+v", d)
	}
	if *d.AcceptanceRate != 0.6 || *d.MeanAcceptedLength != 2.8 {
		t.Errorf("rate %v, length %v, want 0.6 and 2.8", *d.AcceptanceRate, *d.MeanAcceptedLength)
	}
	want := []float64{0.8, 0.55, 0.45}
	for j := range want {
		if len(d.PerPosition) != 3 || math.Abs(d.PerPosition[j]-want[j]) > 1e-12 {
			t.Fatalf("per position %v, want %v", d.PerPosition, want)
		}
	}
	plain := []record.Telemetry{{T: 0, Source: "s", OK: true}, {T: 2e9, Source: "s", OK: true}}
	if s := ServerDuring(plain, 1e9, 1.5e9, nil); s.SpecDecode != nil {
		t.Errorf("no counters, yet %+v", s.SpecDecode)
	}
}
