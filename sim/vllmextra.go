package sim

import (
	"strconv"
	"sync/atomic"
)

// The vLLM families today's dashboards query beyond the core ones (vllmmetrics.go): the
// cache configuration, the waiting queue by reason, cached prompt tokens, per-request KV
// computed at prefill and preemptions, failed requests, and the legacy name of the
// inter-token histogram.

// preemptionBuckets bound vllm:request_num_preemptions (a request is rarely preempted more
// than a few times).
var preemptionBuckets = []float64{0, 1, 2, 5, 10, 20, 50, 100}

// extraStats are the counters and histograms behind those families.
type extraStats struct {
	deferred      atomic.Int64           // waiting requests kept out by the LoRA slot limit (reason "deferred")
	loraInfo      atomic.Pointer[string] // vllm:lora_requests_info's labels (lora.go); nil without adapters
	cachedPrompt  atomic.Int64           // prompt tokens served from the prefix cache, at each first token
	finishedError atomic.Int64           // requests that failed in the server (5xx faults, error events)
	kvComputed    *histogram             // per request: prompt tokens computed at prefill (prompt − cached)
	numPreempt    *histogram             // per request: times it was preempted
}

func newExtraStats(maxModelLen int) extraStats {
	return extraStats{kvComputed: newCountHistogram(build125Buckets(maxModelLen)),
		numPreempt: newCountHistogram(preemptionBuckets)}
}

// onFirstToken counts q's cached prompt tokens when its first token is released.
func (x *extraStats) onFirstToken(q *seq) {
	if c := q.cached.Load(); c > 0 {
		x.cachedPrompt.Add(c)
	}
}

// onFinish observes q's per-request families when its last token is released.
func (x *extraStats) onFinish(q *seq) {
	x.kvComputed.observeN(int64(q.prompt) - max(q.cached.Load(), 0))
	x.numPreempt.observeN(q.preempted)
}

// writeExtra renders the families above; cache is vllm:cache_config_info's label set.
func (p *promWriter) writeExtra(st *simStats, cache string) {
	waiting := st.waiting.Load()
	deferred := min(st.deferred.Load(), waiting)
	p.header("vllm:num_requests_waiting_by_reason", "gauge", "Number of requests waiting to be processed, by reason.")
	p.sample("vllm:num_requests_waiting_by_reason", `,reason="capacity"`, float64(waiting-deferred))
	p.sample("vllm:num_requests_waiting_by_reason", `,reason="deferred"`, float64(deferred))
	p.metric("vllm:prompt_tokens_cached_total", "counter", "Number of cached prompt tokens (local + external).", float64(st.cachedPrompt.Load()))
	p.histogram("vllm:request_prefill_kv_computed_tokens", "Histogram of new KV tokens computed during prefill (excluding cached tokens).", st.kvComputed)
	p.histogram("vllm:request_num_preemptions", "Number of preemptions per request.", st.numPreempt)
	// vLLM V1 still exports the V0 name of the inter-token histogram (deprecated), with the
	// same observations: older dashboards read it
	p.histogram("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds. DEPRECATED: use vllm:inter_token_latency_seconds.", st.itl)
	p.b.WriteString("# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n")
	p.b.WriteString("vllm:cache_config_info{" + cache + "} 1\n")
}

// cacheConfigLabels is vllm:cache_config_info's label set (vLLM's CacheConfig fields that
// the simulator models), computed once.
func (s *Server) cacheConfigLabels() string {
	c := &s.cfg
	block, blocks := DefaultBlockSize, 0
	if s.model != nil {
		block, blocks = s.model.blockSize, s.model.kvCapacity/s.model.blockSize
	}
	dtype := "auto"
	return `block_size="` + strconv.Itoa(block) + `",cache_dtype="` + dtype + `",enable_prefix_caching="` +
		pyBool(s.model != nil && !c.NoPrefixCache) + `",engine="0",gpu_memory_utilization="` + ftoa(c.GPUMemoryUtilization) +
		`",num_gpu_blocks="` + strconv.Itoa(blocks) + `"`
}

// pyBool is a Python bool as vLLM's label values spell it.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
