package metrics

import "servebench/record"

// prefillKeys are the per-request server figures that give the server's own prefill time in
// ms, first match wins: llama.cpp's timings.prompt_ms (from the slot taking the request to
// its first token: llama.cpp's own TTFT) and Ollama's prompt_eval_duration. vLLM gives its
// prefill time only as a Prometheus histogram (Server.Prefill); SGLang's meta_info carries no
// per-request prefill time.
var prefillKeys = []string{"timings.prompt_ms", "ollama.prompt_eval_duration_ms"}

// TTFTSplit is TTFT taken apart where the server reports each request's prefill time:
//
//	TTFT = to headers + prefill + rest
//
// ToHeaders = headers − sent: the network, and the wait in the server's queue for a server
// that sends its headers only when it starts the request (llama.cpp does: its headers leave
// when a slot takes the request). Prefill is the server's own figure. Rest = TTFT − ToHeaders
// − Prefill: the first token's way out (sampling, the write, the network), and for a server
// that sends its headers at once (vLLM, Ollama) also its queue. The client queue (queue,
// dispatched − scheduled) is before sent and in none of them.
//
// The server times its prefill on its own clock, from a start of its choosing: where to
// headers + prefill exceeds TTFT, the two overlapped (the server started its prefill before
// its headers left, or rounded its figure up). Rest is then 0, not negative: a part of TTFT
// cannot take less than no time, and a mean of negative rests would say it did. Overlap
// counts those requests, and OverlapMax is the largest excess.
type TTFTSplit struct {
	Source   string // the server figure used for prefill, e.g. "timings.prompt_ms"
	Requests int    // completed requests with a prefill figure and a headers time
	Of       int    // completed requests with a TTFT
	// ToHeaders, Prefill and Rest are per-request distributions in ns over those requests.
	ToHeaders, Prefill, Rest Stat
	// Overlap is how many requests had to headers + prefill above their TTFT (their rest is
	// 0), and OverlapMax the largest excess in ns.
	Overlap    int
	OverlapMax float64
}

// splitAcc collects the TTFT split of completed requests.
type splitAcc struct {
	src                    string
	of                     int
	headers, prefill, rest sample
	overlap                int
	overlapMax             float64
}

// add takes a completed request's TTFT apart when its server reported a prefill time.
func (sa *splitAcc) add(r *record.Record) {
	t, ok := ttft(r)
	if !ok {
		return
	}
	sa.of++
	if r.Headers == 0 || r.Headers < r.Sent {
		return
	}
	for _, k := range prefillKeys {
		v, ok := r.Server[k]
		if !ok || v < 0 {
			continue
		}
		p := v * 1e6 // ms → ns
		h := float64(r.Headers - r.Sent)
		sa.src = k
		sa.headers.add(h)
		sa.prefill.add(p)
		rest := float64(t) - h - p
		if rest < 0 {
			sa.overlap++
			sa.overlapMax = max(sa.overlapMax, -rest)
			rest = 0
		}
		sa.rest.add(rest)
		return
	}
}

// summary is the split, nil when no request reported a prefill time.
func (sa *splitAcc) summary(ps []float64) *TTFTSplit {
	if len(sa.prefill) == 0 {
		return nil
	}
	return &TTFTSplit{Source: sa.src, Requests: len(sa.prefill), Of: sa.of,
		ToHeaders: sa.headers.stat(ps), Prefill: sa.prefill.stat(ps), Rest: sa.rest.stat(ps),
		Overlap: sa.overlap, OverlapMax: sa.overlapMax}
}
