package sim

import "time"

// vLLM V1's per-request and per-step histograms (vllm/v1/metrics/loggers.py), fed from the
// engine's own schedule: a request's phases end at the virtual end of the step that produced
// the token, the same instants the engine releases tokens at, so Grafana's vLLM dashboard
// reads the simulated engine rather than the HTTP layer's delays.

// vLLM's request_latency_buckets, shared by e2e, queue, prefill, decode and inference time.
var requestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}

// vLLM's fixed iteration_tokens_total buckets (not scaled to the model).
var iterationTokenBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}

// vLLM's request_params_n buckets.
var paramsNBuckets = []float64{1, 2, 5, 10, 20}

// build125Buckets is vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, … up to maxValue.
func build125Buckets(maxValue int) []float64 {
	var out []float64
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p > maxValue {
				return out
			}
			out = append(out, float64(m*p))
		}
	}
}

// reqTimes is one request's timeline as the engine saw it.
type reqTimes struct {
	maxTokens int       // the request's max_tokens: vllm:request_params_max_tokens
	scheduled time.Time // start of the step that first admitted it (vLLM's first SCHEDULED); zero in fixed mode
	firstTok  time.Time // end of the step that produced its first token
}

// requestHistograms are the families vLLM observes once per finished request, and per step.
type requestHistograms struct {
	e2e, queue, prefill, decode, inference, tpot *histogram
	prompt, generation, maxGeneration, maxTok    *histogram
	paramsN, iterTokens                          *histogram
}

func newRequestHistograms(maxModelLen int, latency func([]float64) *histogram) requestHistograms {
	tok := build125Buckets(maxModelLen)
	lat := func() *histogram { return latency(requestLatencyBuckets) }
	return requestHistograms{e2e: lat(), queue: lat(), prefill: lat(), decode: lat(), inference: lat(),
		tpot: latency(itlBuckets), prompt: newCountHistogram(tok), generation: newCountHistogram(tok), maxGeneration: newCountHistogram(tok),
		maxTok: newCountHistogram(tok), paramsN: newCountHistogram(paramsNBuckets), iterTokens: newCountHistogram(iterationTokenBuckets)}
}

// markScheduled stamps the sequences a step admitted for the first time with the step's start.
// A request that arrived while the engine ran late is taken as scheduled on arrival, so that
// queue time is never negative and the phases still add up to e2e.
func (st *simStats) markScheduled(plan []planned, start time.Time) {
	for _, p := range plan {
		if q := p.q; q.times.scheduled.IsZero() {
			q.times.scheduled = maxTime(start, q.arrival)
		}
	}
}

// onRelease stamps q's first token and, when q is done, observes its per-request histograms
// as vLLM does on finishing (aborted requests never get here). It runs on the engine
// goroutine before the handler is woken, so a client that has read the last token scrapes
// its request already counted.
func (st *simStats) onRelease(q *seq, prev int, at time.Time) {
	if prev == 0 {
		q.times.firstTok = at
	}
	if q.generated < q.target {
		return
	}
	sched := q.times.scheduled
	if sched.IsZero() { // fixed mode: no queue, the TTFT is all prefill
		sched = q.arrival
	}
	first := q.times.firstTok
	decode := at.Sub(first)
	st.e2e.observe(at.Sub(q.arrival))
	st.queue.observe(sched.Sub(q.arrival))
	st.prefill.observe(first.Sub(sched))
	st.decode.observe(decode)
	st.inference.observe(at.Sub(sched))
	var tpot time.Duration // vLLM: the first token is the prefill's, and one token means 0
	if q.generated > 1 {
		tpot = decode / time.Duration(q.generated-1)
	}
	st.tpot.observe(tpot)
	st.prompt.observeN(int64(q.prompt))
	st.generation.observeN(int64(q.generated))
	st.maxGeneration.observeN(int64(q.generated)) // n = 1: the longest of one sequence
	st.maxTok.observeN(int64(q.times.maxTokens))
	st.paramsN.observeN(1)
	st.onFinish(q)
}

// observeStep observes one engine step's tokens as vLLM counts them: the tokens it generated
// plus the prompts of the requests whose first token it produced; steps without output are
// not observed. It runs before the step's tokens are released, so a client that has them
// scrapes the step already counted.
func (st *simStats) observeStep(qs ...*seq) {
	var n int64
	for _, q := range qs {
		prev := q.released.Load()
		if prev == 0 {
			n += int64(q.prompt)
		}
		n += int64(q.generated) - prev
	}
	if n > 0 {
		st.iterTokens.observeN(n)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// writeRequestHistograms renders the families above with vLLM's names and help texts.
func (p *promWriter) writeRequestHistograms(h *requestHistograms) {
	p.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", h.e2e)
	p.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", h.queue)
	p.histogram("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", h.inference)
	p.histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", h.prefill)
	p.histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", h.decode)
	p.histogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", h.tpot)
	p.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", h.prompt)
	p.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", h.generation)
	p.histogram("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", h.maxGeneration)
	p.histogram("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", h.maxTok)
	p.histogram("vllm:request_params_n", "Histogram of the n request parameter.", h.paramsN)
	p.histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", h.iterTokens)
}
