package metrics

import (
	"servebench/record"
)

// Accumulator collects the figures of records one at a time and summarises them
// (docs/design/STYLE.md "Accumulate, then summarise"):
//
//	var a metrics.Accumulator
//	for each record r { a.Add(&r) }
//	s := a.Summary()
//
// The zero value is ready to use with DefaultPercentiles and no SLOs. An Accumulator never
// keeps a record: it copies out the numbers it needs, so the caller may reuse the record
// (record.Reader.Read does). Memory grows with what must be sorted for exact percentiles:
// about 4 bytes per content event (one uint32 gap serves both ITL distributions, see
// itlSample; gaps over 4.29 s and events of more than 64 tokens take 16), about 130 bytes
// per request, and 4 bytes per millisecond of the run's span for peak tokens/s (tokenHist;
// 14 MB per hour). Summary sorts in place and allocates next to nothing.
//
// The Accumulator ignores Record.Run: a repeat or sweep is summarised by one Accumulator
// per run, which the caller keeps. It is not safe for concurrent use.
type Accumulator struct {
	opt Options
	hdr *record.Header

	n counts
	// per-request distributions (completed, measured requests only)
	ttft, ttftDispatch, ttftFirst, e2e, e2eQueue, stream, queue sample
	tpot, decode, connect, overhead, promptServer, promptDelta  sample
	ownDelay                                                    sample // overhead less connect
	// pooled per-event distributions: ITL (chunk) and ITL (token), from one store of gaps
	itl itlSample
	// lateness = dispatched − scheduled over every measured request that was dispatched
	lateness sample
	// run level: see runlevel.go
	run runAcc
	// steady keeps what the steady-state check needs of each completed request (steady.go)
	steady steadyAcc
	// sessions keeps the per-turn and per-session figures of a multi-turn run (sessions.go)
	sessions sessionAcc
	media    mediaAcc // images and audio (media.go)
	pool     poolAcc  // embeddings and rerank (pooling.go)
	// runs are the Record.Run values seen, to pick this run's RunEnd lines from the header
	runs map[int]bool
	// sents are the completed requests' sent times and TTFTs, for the server section (server.go)
	sents []SentTTFT
	// coldWarm keeps the server's own timings of prompt evaluation and model loads (coldwarm.go)
	coldWarm coldWarmAcc
	warmEnd  warmupEnd // the warmup's last end, for the warmup overlap (overlap.go)
	// split takes TTFT apart where the server reports a prefill time (ttftsplit.go)
	split splitAcc
	// traced are the completed requests that carried a trace id, for the join with the
	// server's spans (serverspans.go)
	traced []spanReq
	// groups keeps one Accumulator per value of each per-request key (breakdown.go)
	groups groupAcc
	// reason keeps the reasoning-model figures (reasoning.go)
	reason reasoningAcc
	// tools keeps the tool-call and agent-task figures (agents.go)
	tools toolAcc
	// answers keeps the judged answers (answers.go)
	answers answersAcc
	shards  shardAcc // each shard's first measured send, of merged shards (shards.go)
}

// counts are the integer tallies of an Accumulator.
type counts struct {
	measured, completed, failed, warmup int
	cancelled                           int // measured requests cancelled by our own stop
	cooldown                            int // requests sent in the cooldown of a steady-state window
	good                                int // completed requests meeting every SLO
	short                               int // fixed-output requests with fewer tokens than asked
	inputTokens, outputTokens           int64
	errors                              map[string]int
	promptSrc, outputSrc                map[string]int
	itlTokenReqs, itlTokenSkipped       int     // requests with / without per-event counts (≥ 2 events)
	promptMismatch                      int     // server prompt tokens ≠ requested input tokens
	cachedPrompt                        int64   // prompt tokens the server says it took from its prefix cache
	cachedReported                      int     // completed requests whose server reported a cached count
	cachedOf                            int64   // the prompt tokens of those requests
	cachedBeyond                        int64   // of cachedPrompt, the tokens beyond each request's opening
	repeated                            float64 // prompt tokens that repeat an earlier prompt of the run (Record.Repeats)
}

// NewAccumulator returns an Accumulator with the given options. Validate them first
// (Options.Validate); out-of-range percentiles are clamped to [0, 100].
func NewAccumulator(opt Options) *Accumulator {
	return &Accumulator{opt: opt}
}

// SetHeader gives the Accumulator the records file's header, from which Summary takes the
// facts that are not in records (a simulated target, approximate prompt lengths) for its
// warnings. Optional.
func (a *Accumulator) SetHeader(h *record.Header) { a.hdr = h }

// Add adds one record's figures. Warmup records are only counted (they never enter
// statistics); failed records enter the failure counts, the window and concurrency, but no
// latency distribution (docs/design/METRICS.md "Failures"); requests servebench cancelled at a stop are
// only counted (Summary.Cancelled).
func (a *Accumulator) Add(r *record.Record) {
	if a.runs == nil {
		a.runs = make(map[int]bool)
	}
	a.runs[r.Run] = true
	a.steady.addLoad(r) // every request loads the server, warmup and cooldown too (steady.go)
	a.addGroups(r)
	a.coldWarm.add(r)
	a.warmEnd.add(r)
	a.pool.note(r)
	a.shards.add(r)
	if !r.Measured() {
		if r.Phase == record.PhaseCooldown {
			a.n.cooldown++
		} else {
			a.n.warmup++
		}
		return
	}
	if r.ErrorClass == record.ErrCancelled {
		// Cancelled by servebench itself (the grace period after a stop ran out, or a second
		// Ctrl-C): not a server failure, and its end is our cancellation, not the server's, so
		// it stays out of the failures, the window and the concurrency (a 30 s grace would
		// otherwise stretch the window over time in which nothing was measured).
		a.n.cancelled++
		return
	}
	a.n.measured++
	a.sessions.add(r)
	a.tools.add(r) // agents.go
	if r.Dispatched > 0 {
		a.lateness.add(float64(r.Dispatched - r.Scheduled))
	}
	a.run.addSpan(r)
	if !r.OK() {
		a.n.failed++
		inc(&a.n.errors, r.ErrorClass)
		return
	}
	a.n.completed++
	out := a.addTokens(r)
	a.media.add(r)
	a.pool.add(r)
	a.addLatencies(r, out)
	a.addSent(r)
	_, osrc := outputTokens(r)
	one := oneTokenEach(r, out, osrc)
	a.addITL(r, one)
	a.split.add(r)
	a.addTraced(r)
	a.reason.add(r, out)
	a.answers.add(r)
	a.steady.add(r, out)
	a.run.addEvents(r.Events, one)
	if a.meetsSLO(r, out) {
		a.n.good++
	}
}

func inc(m *map[string]int, k string) {
	if *m == nil {
		*m = make(map[string]int)
	}
	if k == "" {
		k = "unknown"
	}
	(*m)[k]++
}
