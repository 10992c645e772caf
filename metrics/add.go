package metrics

import (
	"servebench/record"
)

// addTokens tallies the token counts of a completed request and their sources, and returns
// its output token count.
func (a *Accumulator) addTokens(r *record.Record) int {
	out, osrc := outputTokens(r)
	in, psrc := promptTokens(r)
	a.n.outputTokens += int64(out)
	a.n.inputTokens += int64(in)
	inc(&a.n.outputSrc, osrc)
	inc(&a.n.promptSrc, psrc)
	a.n.repeated += r.Repeats * float64(in)
	// Short outputs: "requests that asked for a fixed output length (ignore_eos / min_tokens)
	// but got fewer tokens are counted and reported: the workload moved under the measurement."
	if r.FixedOutput && r.MaxTokens > 0 && out < r.MaxTokens {
		a.n.short++
	}
	if c, ok := cachedPromptTokens(r); ok {
		a.n.cachedPrompt += c
		a.n.cachedReported++
		a.n.cachedOf += int64(in)
		a.n.cachedBeyond += max(c-opening(r, in, psrc), 0)
	}
	// Server-reported prompt lengths, and their difference from what the workload asked for.
	if psrc == record.SourceServer {
		a.promptServer.add(float64(in))
		// media's tokens are not a mismatch (media.go), nor a pooling request's (pooling.go:
		// per-input special tokens, a rerank query counted once per document)
		if r.InputTokens > 0 && !hasMedia(r) && r.Inputs == 0 {
			d := in - r.InputTokens
			a.promptDelta.add(float64(d))
			if d != 0 {
				a.n.promptMismatch++
			}
		}
	}
	return out
}

// addLatencies adds the per-request latency figures of a completed request.
func (a *Accumulator) addLatencies(r *record.Record, out int) {
	addNS(&a.ttft, ttft, r)
	addNS(&a.ttftDispatch, ttftDispatch, r)
	addNS(&a.ttftFirst, ttftFirstEvent, r)
	addNS(&a.e2e, e2eLatency, r)
	addNS(&a.e2eQueue, e2eQueue, r)
	addNS(&a.stream, streamTime, r)
	addNS(&a.queue, queueTime, r)
	addNS(&a.overhead, clientOverhead, r)
	// Connect time: DNS + dial + TLS, only when a new connection was made (0 = reused).
	if r.Connect > 0 {
		a.connect.add(float64(r.Connect))
	}
	if v, ok := clientOverhead(r); ok {
		a.ownDelay.add(float64(max(v-r.Connect, 0)))
	}
	if v, ok := tpotNS(r, out); ok {
		a.tpot.add(v)
	}
	if v, ok := decodeRate(r, out); ok {
		a.decode.add(v)
	}
}

func addNS(s *sample, f func(*record.Record) (int64, bool), r *record.Record) {
	if v, ok := f(r); ok {
		s.add(float64(v))
	}
}

// addITL adds the request's inter-token latencies to the pooled distributions.
//
// ITL (chunk): "the gaps between consecutive content events of one request. Pooled over all
// requests for the distribution (vLLM's definition)."
//
// ITL (token): "each gap divided evenly among the tokens its later event carried, when
// per-event token counts are known. A 3-token event after a 30 ms gap contributes three
// 10 ms values." Counts are known only when every event of the request has N > 0; a request
// with any unknown count contributes no ITL (token) values at all, rather than a mix of
// per-token and per-event values. The first event's tokens belong to TTFT, not to ITL.
//
// A request whose events carry no counts but whose server-reported output count equals its
// number of content events carried one token per event (llama.cpp streams one token per
// chunk): its counts are known to be 1 (see oneTokenEach).
func (a *Accumulator) addITL(r *record.Record, one bool) {
	ev := r.Events
	if len(ev) < 2 {
		return
	}
	known := true
	for i := range ev {
		known = known && ev[i].N > 0
	}
	known = known || one
	if known {
		a.n.itlTokenReqs++
	} else {
		a.n.itlTokenSkipped++
	}
	for i := 1; i < len(ev); i++ {
		n := ev[i].N
		if one {
			n = 1
		}
		if !known {
			n = 0 // ITL (chunk) only
		}
		a.itl.add(ev[i].T-ev[i-1].T, n)
	}
}

// meetsSLO reports whether a completed request meets every set objective (inclusive:
// "TTFT ≤ 500 ms"). See SLO for the rule of each objective when its figure is undefined.
func (a *Accumulator) meetsSLO(r *record.Record, out int) bool {
	slo := a.opt.SLO
	if !slo.Any() {
		return false
	}
	if slo.TTFT > 0 {
		v, ok := ttft(r)
		if !ok || v > int64(slo.TTFT) {
			return false
		}
	}
	if slo.TPOT > 0 {
		if v, ok := tpotNS(r, out); ok && v > float64(slo.TPOT) {
			return false
		}
	}
	if slo.ITL > 0 && maxGap(r.Events) > int64(slo.ITL) {
		return false
	}
	if slo.TTFO > 0 && !meetsTTFO(r, int64(slo.TTFO)) {
		return false
	}
	if slo.Correct && !r.Right() {
		return false
	}
	if slo.E2E > 0 {
		v, ok := e2eLatency(r)
		if !ok || v > int64(slo.E2E) {
			return false
		}
	}
	return true
}

// cachedKeys are the server figures that count prompt tokens served from a prefix cache:
// llama.cpp's timings, SGLang's meta_info, OpenAI usage.prompt_tokens_details (vLLM).
var cachedKeys = []string{"timings.cache_n", "meta_info.cached_tokens", "usage.cached_tokens"}

// sharedOpening is how many tokens of a prompt's own text past what the server adds may come
// from the prefix cache on a workload of prompts never sent before: texts share openings
// ("question", "Write a", a system phrase), and llama.cpp reuses a slot's previous prompt as
// far as it matches. A replayed prompt is cached whole, far beyond it.
const sharedOpening = 8

// opening is the cached tokens expected of request r on any workload: the tokens the server
// adds to its text (a BOS, a chat template: its prompt count beyond the text's length, at
// least 1) and sharedOpening. in and psrc are its prompt count and their source.
func opening(r *record.Record, in int, psrc string) int64 {
	added := 1
	if psrc == record.SourceServer && r.InputTokens > 0 && !hasMedia(r) {
		added = max(in-r.InputTokens, 1)
	}
	return int64(added + sharedOpening)
}

// cachedPromptTokens is the prompt tokens the server reports it took from its prefix cache,
// and whether it reported them at all: a server that says nothing (vLLM without
// --enable-prompt-tokens-details, TGI, Ollama) has not said 0.
func cachedPromptTokens(r *record.Record) (int64, bool) {
	for _, k := range cachedKeys {
		if v, ok := r.Server[k]; ok && v >= 0 {
			return int64(v), true
		}
	}
	return 0, false
}

// oneTokenEach reports whether each content event of r carried exactly one token though none
// said so: no event has a count, and the server's own output count (usage) equals the number
// of content events. Any other source (one per event by our own count, a tokenizer) proves
// nothing and leaves the counts unknown.
func oneTokenEach(r *record.Record, out int, src string) bool {
	if src != record.SourceServer || out != len(r.Events) || out == 0 {
		return false
	}
	for _, e := range r.Events {
		if e.N != 0 {
			return false
		}
	}
	return true
}
