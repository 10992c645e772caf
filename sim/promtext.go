package sim

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// histogram is a Prometheus histogram with fixed buckets, lock-free so that the engine
// goroutine never waits for a /metrics scrape. Values are whole units (nanoseconds or tokens),
// so that a value on a bucket's bound always falls in that bucket.
type histogram struct {
	bounds []float64 // upper bounds as exposed: seconds or tokens
	raw    []int64   // the same bounds in units
	unit   float64   // exposed value of one unit: 1e-9 for durations, 1 for counts
	counts []atomic.Uint64
	sum    atomic.Int64 // in units
	count  atomic.Uint64
}

// newHistogram is a histogram of durations, bounds in seconds.
func newHistogram(bounds []float64) *histogram { return newUnitHistogram(bounds, 1e-9) }

// newCountHistogram is a histogram of counts (tokens, parameters).
func newCountHistogram(bounds []float64) *histogram { return newUnitHistogram(bounds, 1) }

func newUnitHistogram(bounds []float64, unit float64) *histogram {
	h := &histogram{bounds: bounds, raw: make([]int64, len(bounds)), unit: unit, counts: make([]atomic.Uint64, len(bounds))}
	for i, b := range bounds {
		h.raw[i] = int64(math.Round(b / unit))
	}
	return h
}

func (h *histogram) observe(d time.Duration) { h.observeN(int64(d)) }

func (h *histogram) observeN(v int64) {
	// the first bound ≥ v is v's bucket (binary search: the fine layout has ~350 bounds)
	if i, _ := slices.BinarySearch(h.raw, v); i < len(h.raw) {
		h.counts[i].Add(1)
	}
	h.sum.Add(v)
	h.count.Add(1)
}

// vLLM's bucket boundaries, so dashboards built for vLLM read the simulator unchanged.
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	itlBuckets  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
)

// simStats are the counters behind /metrics. The engine writes them; scrapes read them.
type simStats struct {
	running, waiting atomic.Int64
	kvUsed           atomic.Int64
	kvCapacity       int64
	promptTokens     atomic.Int64
	genTokens        atomic.Int64
	preemptions      atomic.Int64
	prefixQueries    atomic.Int64 // prompt tokens looked up in the prefix cache
	prefixHits       atomic.Int64 // of which found cached
	finishedLength   atomic.Int64
	finishedStop     atomic.Int64
	finishedAbort    atomic.Int64
	ttft, itl        *histogram
	requestHistograms
	extraStats
}

// newSimStats sizes the token-count buckets to maxModelLen, as vLLM does; fine adds bounds
// to the latency histograms (see fineBounds).
func newSimStats(kvCapacity, maxModelLen int, fine bool) *simStats {
	lat := func(b []float64) *histogram {
		if fine {
			b = fineBounds(b)
		}
		return newHistogram(b)
	}
	return &simStats{kvCapacity: int64(kvCapacity), ttft: lat(ttftBuckets), itl: lat(itlBuckets),
		requestHistograms: newRequestHistograms(maxModelLen, lat), extraStats: newExtraStats(maxModelLen)}
}

// fineBounds is vllm's bounds plus 16 bounds per doubling (ratio 2^(1/16) ≈ 1.044) from 0.1 ms
// to its highest bound. histogram_quantile interpolates within one bucket, so a quantile
// read from these is within 4.4% of the true value, where vLLM's own (1 s to 2.5 s in one
// bucket) can be off by half. Every vLLM bound is kept, so a query written for vLLM's
// buckets reads these too.
func fineBounds(vllm []float64) []float64 {
	top := vllm[len(vllm)-1]
	out := slices.Clone(vllm)
	for i := 0; ; i++ {
		b := 0.0001 * math.Pow(2, float64(i)/16)
		if b >= top {
			break
		}
		out = append(out, math.Round(b*1e7)/1e7) // tenths of a microsecond: short le labels
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// promWriter appends the Prometheus text exposition format by hand (standard library only).
type promWriter struct {
	b     bytes.Buffer
	label string // `model_name="...",engine="0"`: vLLM's labels, engine the index of the one engine core
}

func (p *promWriter) header(name, typ, help string) {
	p.b.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
}

func (p *promWriter) sample(name, extraLabels string, v float64) {
	p.b.WriteString(name + "{" + p.label + extraLabels + "} ")
	p.b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	p.b.WriteByte('\n')
}

func (p *promWriter) metric(name, typ, help string, v float64) {
	p.header(name, typ, help)
	p.sample(name, "", v)
}

func (p *promWriter) histogram(name, help string, h *histogram) {
	p.header(name, "histogram", help)
	// The engine adds to a bucket before the count, so a scrape between the two can see one
	// more in the buckets than in the count: taking the larger keeps +Inf ≥ every bucket.
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		p.sample(name+"_bucket", `,le="`+pyFloat(b)+`"`, float64(cum))
	}
	n := max(h.count.Load(), cum)
	p.sample(name+"_bucket", `,le="+Inf"`, float64(n))
	p.sample(name+"_sum", "", float64(h.sum.Load())*h.unit)
	p.sample(name+"_count", "", float64(n))
}

// pyFloat formats a bucket bound as vLLM's Python client writes le (floatToGoString):
// "1.0", "0.001", "2560.0", and the exponent form from a million up ("1e+06").
func pyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	dot := strings.IndexByte(s, '.')
	if f > 0 && dot > 6 {
		mantissa := strings.TrimRight(s[:1]+"."+s[1:dot]+s[dot+1:], "0.")
		return mantissa + "e+0" + strconv.Itoa(dot-1)
	}
	return s
}

// writeMetrics renders every metric with vLLM's names plus servebench_sim_info.
func (s *Server) writeMetrics() []byte {
	st := s.stats
	p := &promWriter{label: `model_name="` + promEscape(s.modelName) + `",engine="0"`}
	p.header("servebench_sim_info", "gauge", "Simulated server: the figures come from a model, not a GPU.")
	p.b.WriteString("servebench_sim_info{")
	for i, k := range sortedKeys(s.describe) {
		if i > 0 {
			p.b.WriteByte(',')
		}
		p.b.WriteString(k + `="` + promEscape(s.describe[k]) + `"`)
	}
	p.b.WriteString("} 1\n")
	p.metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", float64(st.running.Load()))
	p.metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", float64(st.waiting.Load()))
	usage := 0.0
	if st.kvCapacity > 0 {
		usage = math.Min(1, float64(st.kvUsed.Load())/float64(st.kvCapacity))
	}
	p.metric("vllm:gpu_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", usage)
	p.metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", usage)
	p.metric("vllm:num_preemptions_total", "counter", "Cumulative number of preemptions from the engine.", float64(st.preemptions.Load()))
	// vLLM V1's counters are in tokens; the hit rate gauge is V0's, kept because older
	// dashboards read it (here hits over queries since start).
	// Hits are loaded before queries, which the engine stores first, so hits ≤ queries.
	hits := st.prefixHits.Load()
	queries := st.prefixQueries.Load()
	p.metric("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", float64(queries))
	p.metric("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", float64(hits))
	rate := 0.0
	if queries > 0 {
		rate = float64(hits) / float64(queries)
	}
	p.metric("vllm:gpu_prefix_cache_hit_rate", "gauge", "GPU prefix cache block hit rate.", rate)
	p.metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", float64(st.promptTokens.Load()))
	p.metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", float64(st.genTokens.Load()))
	p.header("vllm:request_success_total", "counter", "Count of successfully processed requests.")
	p.sample("vllm:request_success_total", `,finished_reason="length"`, float64(st.finishedLength.Load()))
	p.sample("vllm:request_success_total", `,finished_reason="stop"`, float64(st.finishedStop.Load()))
	p.sample("vllm:request_success_total", `,finished_reason="abort"`, float64(st.finishedAbort.Load()))
	p.sample("vllm:request_success_total", `,finished_reason="error"`, float64(st.finishedError.Load()))
	p.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", st.ttft)
	p.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", st.itl)
	p.writeRequestHistograms(&st.requestHistograms)
	p.writeExtra(st, s.cacheConfigLabels())
	p.writeSpecDecode(s.eng.spec)
	p.writeLoRAInfo(st.loraInfo.Load())
	return p.b.Bytes()
}

// promEscape escapes a label value: backslash, double quote and newline.
func promEscape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}
