package telemetry

import "bytes"

// vllmFamilies are the vLLM series that explain serving: the queue, the batch, the KV cache
// and its preemptions, the prefix cache, the token counters and the server's own latency
// histograms. Everything else vLLM exports (per-request length histograms, cache config
// info, process metrics) is left out by default: it costs bytes every second and explains
// nothing a run's summary shows.
var vllmFamilies = []string{
	"vllm:num_requests_running", "vllm:num_requests_waiting",
	"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
	"vllm:num_preemptions_total",
	"vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
	"vllm:prompt_tokens_total", "vllm:generation_tokens_total",
	"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
	"vllm:time_per_output_token_seconds", "vllm:request_queue_time_seconds",
	"vllm:e2e_request_latency_seconds",
	// speculative decoding: the acceptance rate and mean accepted length of the summary
	"vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
	"vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens_per_pos_total",
}

// familyPrefixes are the servers whose every family is kept by default: SGLang, TGI,
// llama.cpp, Triton and NVIDIA DCGM export few enough series that all of them fit.
var familyPrefixes = []string{"sglang:", "tgi_", "llamacpp:", "nv_", "DCGM_FI_"}

// Filter decides which metric families a scrape keeps.
type Filter struct {
	All   bool            // keep every family (--scrape-all)
	exact map[string]bool // vllmFamilies
}

// DefaultFilter keeps the families that explain serving (vllmFamilies, familyPrefixes).
func DefaultFilter() *Filter {
	f := &Filter{exact: make(map[string]bool, len(vllmFamilies))}
	for _, n := range vllmFamilies {
		f.exact[n] = true
	}
	return f
}

// Keep reports whether the family named name is kept.
func (f *Filter) Keep(name string) bool { return f.keep([]byte(name)) }

func (f *Filter) keep(name []byte) bool {
	if f == nil || f.All || f.exact[string(name)] { // no allocation: the compiler elides the conversion
		return true
	}
	for _, p := range familyPrefixes {
		if bytes.HasPrefix(name, []byte(p)) {
			return true
		}
	}
	return false
}

// keepSample reports whether a sample line named name belongs to a kept family: the family
// itself, or a histogram's or summary's _bucket, _sum and _count lines. _created lines
// (a Python client's creation timestamps) are not kept for a named family: they are no
// observation of serving.
func (f *Filter) keepSample(name []byte) bool {
	if f.keep(name) {
		return true
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := bytes.CutSuffix(name, []byte(suf)); ok && f.exact[string(base)] {
			return true
		}
	}
	return false
}
