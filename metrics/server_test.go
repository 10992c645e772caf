package metrics

import (
	"math"
	"testing"

	"servebench/record"
)

// histogram_quantile by hand: buckets le 0.1: 10, 0.5: 30, 1: 40, +Inf: 40. p50: rank 20 is
// in (0.1, 0.5], 10 of its 20 → 0.1 + 0.4·10/20 = 0.3. p99: rank 39.6 in (0.5, 1], 9.6 of
// 10 → 0.98. p10: rank 4 in the first bucket, from 0 → 0.04.
func TestHistQuantileMatchesPrometheus(t *testing.T) {
	bounds, cum := []float64{0.1, 0.5, 1}, []float64{10, 30, 40}
	for _, c := range []struct{ q, want float64 }{{0.5, 0.3}, {0.99, 0.98}, {0.1, 0.04}} {
		got, _, _ := histQuantile(c.q, bounds, cum, 40)
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("q %v: %v, want %v", c.q, got, c.want)
		}
	}
	// a rank in the +Inf bucket: the highest finite bound
	if got, _, _ := histQuantile(0.99, bounds, cum, 50); got != 1 {
		t.Errorf("+Inf bucket: %v, want 1", got)
	}
}

func gauge(name string, v float64) record.Series {
	return record.Series{Name: name, Type: record.TypeGauge, Value: &v}
}

func counter(name string, v float64) record.Series {
	return record.Series{Name: name, Type: record.TypeCounter, Value: &v}
}

func hist(name string, cum []float64, count, sum float64) record.Series {
	s := record.Series{Name: name, Type: record.TypeHistogram, Count: &count, Sum: &sum}
	for i, le := range []float64{0.1, 0.5, 1} {
		s.Buckets = append(s.Buckets, [2]float64{le, cum[i]})
	}
	return s
}

// Over a window [10, 30]: gauges from the samples inside it, counter deltas and histogram
// quantiles between the samples bracketing it (t 5 and t 35), a counter reset counted from
// its new value, and the attribution from the latest sample at or before each sent time.
func TestServerDuringWindow(t *testing.T) {
	const src = "http://h/metrics"
	mk := func(ts int64, waiting, kv, preempt float64, cum []float64, count float64) record.Telemetry {
		return record.Telemetry{T: ts, Source: src, OK: true, Series: []record.Series{
			gauge("vllm:num_requests_waiting", waiting), gauge("vllm:kv_cache_usage_perc", kv),
			counter("vllm:num_preemptions_total", preempt),
			hist("vllm:time_to_first_token_seconds", cum, count, count*0.3),
		}}
	}
	samples := []record.Telemetry{
		mk(0, 0, 0.1, 100, []float64{0, 0, 0}, 0),
		mk(5, 0, 0.2, 100, []float64{0, 0, 0}, 0),
		mk(15, 4, 0.9, 104, []float64{5, 15, 20}, 20),
		{T: 20, Source: src, Error: "timeout"},
		mk(25, 2, 1.0, 2, []float64{10, 30, 40}, 40), // the server restarted its counter
		mk(35, 0, 0.3, 3, []float64{10, 30, 40}, 40),
		mk(50, 0, 0.3, 9, []float64{10, 30, 40}, 40),
	}
	reqs := []SentTTFT{{Sent: 16, TTFT: 900}, {Sent: 6, TTFT: 10}, {Sent: 7, TTFT: 11}, {Sent: 8, TTFT: 12},
		{Sent: 9, TTFT: 13}, {Sent: 10, TTFT: 14}, {Sent: 11, TTFT: 15}, {Sent: 26, TTFT: 16}, {Sent: 12, TTFT: 17}, {Sent: 13, TTFT: 18}}
	s := ServerDuring(samples, 10, 30, reqs)
	if len(s.Sources) != 1 || s.Sources[0].Scrapes != 7 || s.Sources[0].OK != 6 || s.Sources[0].Errors["timeout"] != 1 {
		t.Errorf("sources %+v", s.Sources)
	}
	if w := s.Waiting; w == nil || w.N != 2 || w.Mean != 3 || w.Max != 4 {
		t.Errorf("waiting %+v", w)
	}
	if kv := s.KVUsage; kv == nil || kv.Max != 1 {
		t.Errorf("kv %+v", kv)
	}
	// 100 → 104 (+4), reset to 2 (+2), → 3 (+1)
	if s.Preemptions == nil || *s.Preemptions != 7 {
		t.Errorf("preemptions %v, want 7", s.Preemptions)
	}
	if h := s.TTFT; h == nil || h.Count != 40 || math.Abs(h.P50-0.3) > 1e-12 || h.P50Lo != 0.1 || h.P50Hi != 0.5 {
		t.Errorf("ttft %+v", h)
	}
	// p90 of the TTFTs is above every one but 900; its request was sent at 16, after the
	// sample at 15 with 4 waiting; of the rest only the one sent at 26 saw a queue (2)
	if a := s.Attribution; a == nil || a.Slow != 1 || a.SlowWaiting != 1 || a.Rest != 9 || a.RestWaiting != 1 {
		t.Errorf("attribution %+v", a)
	}
	if ServerDuring(nil, 0, 1, nil) != nil {
		t.Error("no samples: want nil")
	}
}

// TestGenerationRateInsideWindow: the server's own output rate over a window [1 s, 4 s] is the
// generation counter's increase between its samples inside it (t 1.5 s and 3.5 s: 400
// tokens in 2 s), not over the bracketing samples (t 0 and 5 s, which hold idle time); one
// sample inside gives none.
func TestGenerationRateInsideWindow(t *testing.T) {
	const src = "http://h/metrics"
	mk := func(ts int64, tokens float64) record.Telemetry {
		return record.Telemetry{T: ts, Source: src, OK: true, Series: []record.Series{counter("vllm:generation_tokens_total", tokens)}}
	}
	samples := []record.Telemetry{mk(0, 0), mk(1.5e9, 100), mk(3.5e9, 500), mk(5e9, 600)}
	s := ServerDuring(samples, 1e9, 4e9, nil)
	if s.GenerationRate == nil || *s.GenerationRate != 200 || s.GenerationSpan != 2 || *s.GenerationTokens != 600 {
		t.Errorf("rate %v over %v s (bracketing increase %v): want 200 tok/s over 2 s", s.GenerationRate, s.GenerationSpan, s.GenerationTokens)
	}
	if s := ServerDuring(samples, 1e9, 2e9, nil); s.GenerationRate != nil {
		t.Errorf("one sample inside gave a rate %v", *s.GenerationRate)
	}
}
