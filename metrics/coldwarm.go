package metrics

import (
	"fmt"
	"slices"
	"strings"

	"servebench/record"
)

// This file reads what a server's own timings say about the state it served a request in: a
// prompt served from its cache, and a model loaded inside the measurement. Ollama reports no
// cached-token count, and 0.17.4 counts the whole prompt in prompt_eval_count even when it
// reused its cache for all but the last token (docs/servers.md): only its timing gives a hit
// away. These warnings are kept apart from warnings.go's, which other checks grow.

// The Ollama server figures these checks read (client/ollama records them).
const (
	ollamaPromptCount = "ollama.prompt_eval_count"
	ollamaPromptMS    = "ollama.prompt_eval_duration_ms"
	ollamaLoadMS      = "ollama.load_duration_ms"
	ollamaEvalCount   = "ollama.eval_count"
	ollamaEvalMS      = "ollama.eval_duration_ms"
)

const (
	// hitFactor: a request that evaluated its prompt at under a fifth of the time per token of
	// the run's slowest request of similar length was served from the prompt cache. A hit
	// evaluates one token, which costs about one decode step. Recorded on Ollama 0.17.4 (mini
	// model, 250-token prompt, 2 CPU cores): 16.8 ms/token cold, 2.0 on the hit (8.3× less)
	// with the machine at load 25, where a decode step took 520 ms; the quiet machine
	// gave 1.05 against 0.015 (70×). With OLLAMA_NUM_PARALLEL=1 (the default) a cold prompt
	// is not slowed by others' prompts, and a prompt of up to twice the length may cost half
	// as much per token on a GPU: 2 × 2 = 4 stays under 5 (TestOllamaNoFalseHit). A partial
	// hit (a shared system prompt) is not flagged.
	hitFactor = 5
	// hitSteps: a hit's prompt evaluation takes at most this many of its own decode steps
	// (eval_duration / eval_count); 0.97 in the recording. A cold prompt on a CPU takes many
	// more, so this keeps a cold request that only looks fast beside a slow outlier unflagged.
	hitSteps = 5
	// similarLength: prompts compared per token are within this factor of each other's length,
	// because short prompts cost more per token (fixed overhead) and long ones more on a CPU
	// (attention): per-token times of different lengths are not comparable.
	similarLength = 2
	// loadMinMS: a load_duration above this was a model load. A request to a loaded model
	// reports a few milliseconds (4.8 ms recorded on 0.17.4 at load 25); loading even the
	// 14 MB test model took 300 to 760 ms.
	loadMinMS = 50
	// slowFirstFactor and slowFirstMin: the first measured request's TTFT above 10× the median
	// of at least 5 requests is a cold start (a load, a compile, a cache fill) inside the
	// measurement, whatever the server reports.
	slowFirstFactor = 10
	slowFirstMin    = 5
)

// designHit: a hit on a request whose prompt the workload repeats by design for at least this
// share (Record.Repeats: the same prompt sent again, a long shared prefix) is the workload's,
// not a replay's. A hit evaluates its prompt hitFactor times faster per token, so it skipped
// at least 1 − 1/hitFactor of it; the 5 points below it are the cache note's margin.
const designHit = 1 - 1.0/hitFactor - 0.05

// promptEval is one completed request's prompt evaluation as the server timed it.
type promptEval struct {
	id       int
	measured bool
	tokens   float64 // prompt tokens the server counted
	ms       float64 // time the server spent on them
	input    int     // prompt tokens the workload asked for (0: unknown)
	stepMS   float64 // the server's decode time per output token (0: unknown)
	repeats  float64 // the share of the prompt the workload repeats by design (Record.Repeats)
}

func (e promptEval) perToken() float64 { return e.ms / e.tokens }

// firstReq is the earliest-sent completed measured request.
type firstReq struct {
	id         int
	sent, ttft int64
}

// coldWarmAcc keeps what the cache-hit and model-load checks need: every completed request's
// prompt evaluation (warmup's too: they are the run's cold requests as often as not), the
// measured requests that waited for a model load, and the first measured request.
type coldWarmAcc struct {
	evals []promptEval
	loads []promptEval // ms is the load time
	first *firstReq
	// earlier are the prompt evaluations of the file's earlier runs (Runs and After set them):
	// a run of a --repeat set has no cold request of its own when run 1 warmed the cache.
	earlier []promptEval
}

// After makes a, the accumulator of a later run of the same records file, judge prompt-cache
// hits against prev's requests and every run before it too, as Runs does for a file read
// back: run writes each run's summary as the run ends, one Accumulator at a time.
func (a *Accumulator) After(prev *Accumulator) {
	if prev == nil {
		return
	}
	a.coldWarm.earlier = append(slices.Clip(prev.coldWarm.earlier), prev.coldWarm.evals...)
}

// add copies out the figures of a completed request (measured or warmup).
func (c *coldWarmAcc) add(r *record.Record) {
	if !r.OK() || r.Phase == record.PhaseCooldown {
		return
	}
	measured := r.Measured()
	if n, ms := r.Server[ollamaPromptCount], r.Server[ollamaPromptMS]; ms > 0 {
		e := promptEval{id: r.ID, measured: measured, tokens: n, ms: ms, input: r.InputTokens, repeats: r.Repeats}
		if out := r.Server[ollamaEvalCount]; out >= 2 {
			e.stepMS = r.Server[ollamaEvalMS] / out
		}
		c.evals = append(c.evals, e)
	}
	if !measured {
		return
	}
	if ms := r.Server[ollamaLoadMS]; ms > loadMinMS {
		c.loads = append(c.loads, promptEval{id: r.ID, ms: ms})
	}
	if v, ok := ttft(r); ok && (c.first == nil || r.Sent < c.first.sent) {
		c.first = &firstReq{id: r.ID, sent: r.Sent, ttft: v}
	}
}

// cacheHits returns the measured evaluations that were prompt-cache hits, and the per-token
// times (ms) they and the cold requests they were judged against took. A hit: a prompt whose
// server count is under half the requested length (an Ollama before 0.17 counted only what it
// evaluated), or one evaluated hitFactor times faster per token than the slowest request of
// similar length in ref, in at most hitSteps of its own decode steps.
func cacheHits(evals, ref []promptEval) (hits []promptEval, hitMS, coldMS float64) {
	for _, e := range evals {
		if !e.measured {
			continue
		}
		if e.input > 0 && e.tokens < float64(e.input)/2 {
			hits = append(hits, e)
			continue
		}
		if e.tokens <= 0 {
			continue
		}
		cold := 0.0
		for _, r := range ref {
			if r.tokens > 0 && r.tokens*similarLength >= e.tokens && r.tokens <= e.tokens*similarLength {
				cold = max(cold, r.perToken())
			}
		}
		if e.perToken()*hitFactor < cold && (e.stepMS == 0 || e.ms <= hitSteps*e.stepMS) {
			hits = append(hits, e)
			hitMS = max(hitMS, e.perToken())
			coldMS = max(coldMS, cold)
		}
	}
	return hits, hitMS, coldMS
}

// coldWarmWarnings are the notes on cache hits and model loads the server's own figures show,
// and the hint that cached tokens are unknown on a native API that reports none.
func (a *Accumulator) coldWarmWarnings(s *Summary) []Warning {
	c := &a.coldWarm
	var w []Warning
	hits, hitMS, coldMS := cacheHits(c.evals, append(slices.Clip(c.earlier), c.evals...))
	designed, beyond := splitHits(hits)
	measured := measuredEvals(c.evals)
	switch {
	case len(beyond) > 0:
		w = append(w, Warning{Level: Invalidates, Text: hitWarning(beyond, len(measured), hitMS, coldMS, designNote(s, measured)),
			Action: "send prompts the server has not seen (--nonce fresh, the default, or another --seed), or restart the server before the run"})
	case len(designed) > 0:
		w = append(w, warn(Info, "", "Ollama served %d of %d measured requests (%s) from its prompt cache, each one the workload repeats by design: %s",
			len(designed), len(measured), idList(designed), designNote(s, measured)))
	case len(c.evals) > 0 && s.CachedReported == 0:
		w = append(w, warn(Info, "", "Ollama reports no cached prompt tokens; its own prompt-evaluation times show no request %d× faster per token than the run's others of similar length, which rules out cache hits on part of the run but not on all of it (a workload the server saw before this run)", hitFactor))
	case s.Completed > 0 && s.CachedReported == 0 && !s.Simulated && a.hdr != nil && nativeAPI(a.hdr.Target.API) && s.Streams():
		w = append(w, warn(Info, "", "the server reported no cached prompt tokens (--api %s), so whether TTFT measured prefix-cache hits is unknown (not 0)", a.hdr.Target.API))
	}
	if len(c.loads) > 0 {
		w = append(w, Warning{Level: Distorts, Text: loadWarning(c.loads), Action: "--warmup 1 or more keeps the model load out"})
	} else if f := c.first; f != nil && s.TTFT.N >= slowFirstMin && float64(f.ttft) > slowFirstFactor*s.TTFT.Median {
		w = append(w, warn(Distorts, "--warmup 1 or more takes it out", "the first measured request (id %d) waited %.1f ms for its first token, %.0f× the median TTFT: a model load or cold start fell inside the measurement and is in its figures",
			f.id, float64(f.ttft)/1e6, float64(f.ttft)/s.TTFT.Median))
	}
	return w
}

// nativeAPI reports whether api is a server's own API (the OpenAI-compatible ones have their
// own hint in tokenWarnings).
func nativeAPI(api string) bool { return api != "" && !strings.HasPrefix(api, "openai") }

func measuredEvals(es []promptEval) []promptEval {
	var out []promptEval
	for _, e := range es {
		if e.measured {
			out = append(out, e)
		}
	}
	return out
}

// splitHits parts cache hits into those on prompts the workload repeats by design (designHit)
// and the others.
func splitHits(hits []promptEval) (designed, beyond []promptEval) {
	for _, e := range hits {
		if e.repeats >= designHit {
			designed = append(designed, e)
		} else {
			beyond = append(beyond, e)
		}
	}
	return designed, beyond
}

// designNote says what the workload repeats by design: its share of the prompt tokens and
// how many of the measured requests begin mostly as a prompt sent before them.
func designNote(s *Summary, measured []promptEval) string {
	n := 0
	for _, e := range measured {
		if e.repeats >= designHit {
			n++
		}
	}
	share := 0.0
	if s.InputTokens > 0 {
		share = float64(s.RepeatedPromptTokens) / float64(s.InputTokens)
	}
	return fmt.Sprintf("the workload repeats %.1f%% of its prompt tokens by design (%d of %d measured requests send again at least %.0f%% of a prompt sent before them)",
		100*share, n, len(measured), 100*designHit)
}

func hitWarning(hits []promptEval, n int, hitMS, coldMS float64, design string) string {
	how := fmt.Sprintf("they evaluated their prompt at %.3f ms/token or less against %.3f ms/token for cold requests of similar length in this or an earlier run (Ollama's prompt_eval_duration / prompt_eval_count, which counts the whole prompt even on a hit)", hitMS, coldMS)
	if coldMS == 0 {
		how = "the server counted under half of the requested prompt tokens as evaluated"
	}
	return fmt.Sprintf("Ollama served %d of %d measured requests (%s) from its prompt cache beyond what the workload repeats by design: %s; %s. TTFT measures cache hits, not prefill. A workload replayed on a server that has seen it (run --like, --repeat, a second run with the same --seed) is faster for that reason alone: restart the server, or change --seed, to measure cold prefill",
		len(hits), n, idList(hits), how, design)
}

func loadWarning(loads []promptEval) string {
	slowest := 0.0
	for _, l := range loads {
		slowest = max(slowest, l.ms)
	}
	if len(loads) == 1 {
		return fmt.Sprintf("Ollama loaded the model during measured request id %d (load_duration %.0f ms): the load is in that request's TTFT and latency; --warmup 1 or more loads it before measuring", loads[0].id, slowest)
	}
	return fmt.Sprintf("Ollama loaded the model during %d measured requests (%s; load_duration up to %.0f ms): the model was unloaded mid-run (keep_alive expired, or another model took its memory), and each load is in its request's TTFT and latency",
		len(loads), idList(loads), slowest)
}

// idList names requests by id, the first five and a count of the rest.
func idList(es []promptEval) string {
	var b strings.Builder
	b.WriteString("id")
	if len(es) > 1 {
		b.WriteString("s")
	}
	for i, e := range es {
		if i == 5 {
			fmt.Fprintf(&b, " and %d more", len(es)-5)
			break
		}
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %d", e.id)
	}
	return b.String()
}
