package sim

import (
	"slices"
	"sync/atomic"
	"time"
)

// seq is one request inside the engine. The engine goroutine owns the plain fields; the
// stream handler reads only the atomics and the notify channel.
type seq struct {
	// reset, when not nil, makes this no sequence but a request to empty the prefix cache:
	// the engine closes it when done (POST /reset_prefix_cache)
	reset    chan struct{}
	id       string
	prompt   int    // prompt tokens
	target   int    // output tokens to generate (max_tokens, or fewer at a seeded EOS)
	chunk    int    // tokens released per event (1, k with the multi_token fault, k+1 with speculative decoding)
	lora     int    // the LoRA adapter asked for, from 1 (0 = the base model)
	textSeed uint64 // picks the output words
	arrival  time.Time
	hasher   blockHasher // prefix cache: the prompt's block hashes, extended as tokens are generated (size 0: off)
	times    reqTimes    // engine times behind vLLM's per-request histograms
	trace    *traceCtx   // the request's traceparent (otlp.go); nil: none, or no exporter

	// Engine-owned state.
	generated     int
	computed      int  // tokens held in the KV cache
	prefillTarget int  // tokens to (re)compute before decoding: prompt + generated
	prefilling    bool // still computing prefillTarget
	done          bool // finished inside the scheduler (KV freed)
	lastEmit      time.Time
	due           time.Time // fixed mode: next release time
	heapIndex     int
	preempted     int64 // times preempted: vllm:request_num_preemptions

	// Engine-owned prefix-cache state.
	blocks  []*cacheBlock // the leading blocks of q's KV, held in the cache
	queried bool          // the cache was consulted (at first admission)

	// Shared with the stream handler.
	released  atomic.Int64  // tokens the client may now see
	finished  atomic.Bool   // released == target: no more tokens will come
	cancelled atomic.Bool   // the client went away: drop the sequence, free its KV
	cached    atomic.Int64  // prompt tokens found in the prefix cache at first admission; −1 = cache off
	notify    chan struct{} // capacity 1: a wake-up, never blocks the engine
}

func newSeq(id string, prompt, target, chunk int, textSeed uint64, arrival time.Time) *seq {
	q := &seq{id: id, prompt: prompt, target: target, chunk: max(chunk, 1), textSeed: textSeed,
		arrival: arrival, notify: make(chan struct{}, 1)}
	q.cached.Store(-1)
	return q
}

// wake notifies the handler without blocking: if a wake-up is already pending the handler
// will read the latest counters anyway.
func (q *seq) wake() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// planned is one sequence's share of a step: n new tokens on top of ctx cached ones.
type planned struct {
	q      *seq
	n, ctx int
}

// scheduler is a vLLM-like continuous-batching scheduler in virtual time: it knows nothing
// of the wall clock, so tests can run it step by step. Each step it (1) gives every running
// sequence its next prefill chunk or decode token, preempting the most recently admitted
// sequence (recompute: back to the front of the queue, KV freed) while the KV cache cannot
// hold the step's new tokens, then (2) admits waiting sequences while max-num-seqs, the
// max-num-batched-tokens budget and the KV cache allow, unless it preempted this step.
//
// With the prefix cache on, a sequence admitted with its computed count at 0 starts from the
// longest cached run of its leading blocks, and every full block it computes is cached.
// kvUsed counts every cached block, held or free, plus each running sequence's tokens beyond
// the blocks it holds; free cached blocks are evicted before anything is refused or preempted.
type scheduler struct {
	m           *model
	maxSeqs     int
	maxTokens   int
	waiting     []*seq
	running     []*seq
	kvUsed      int
	preemptions int64
	plan        []planned
	emitted     []*seq // sequences that produced tokens in the last step
	stepTokens  int    // tokens computed in the last step: its batch shape for graph capture
	stepSeqs    int    // sequences in the last step: its batch size, for lazy compilation
	stepPrefill int    // prompt tokens computed in the last step, for lazy compilation

	spec *specDecoder // nil = no speculative decoding
	lora *loraSlots   // nil = no LoRA adapters

	cache   *prefixCache // nil = prefix caching off
	hit     []*cacheBlock
	queries int64 // prompt tokens looked up in the prefix cache (vLLM counts first admissions)
	hits    int64 // of which found
}

func newScheduler(m *model, maxSeqs, maxTokens int) *scheduler {
	return &scheduler{m: m, maxSeqs: maxSeqs, maxTokens: maxTokens}
}

// add queues a new sequence.
func (s *scheduler) add(q *seq) {
	q.prefillTarget, q.prefilling = q.prompt, true
	s.waiting = append(s.waiting, q)
}

// idle reports that nothing is queued or running.
func (s *scheduler) idle() bool { return len(s.waiting) == 0 && len(s.running) == 0 }

// step plans and applies one engine step and returns its duration from the roofline. The
// sequences that produced tokens are in s.emitted until the next call.
func (s *scheduler) step() time.Duration {
	s.plan, s.emitted = s.plan[:0], s.emitted[:0]
	budget := s.maxTokens
	preempted := s.scheduleRunning(&budget)
	if !preempted {
		s.admitWaiting(&budget)
	}
	var w stepWork
	s.stepPrefill = 0
	for _, p := range s.plan {
		if p.q.prefilling {
			s.stepPrefill += p.n
		}
		w.add(p.ctx, p.n)
		s.apply(p)
	}
	s.compactRunning()
	s.stepTokens, s.stepSeqs = w.tokens, len(s.plan)
	return s.m.stepTime(w) + s.lora.loadCost(s.plan)
}

// scheduleRunning plans the running sequences in admission order; it reports a preemption.
func (s *scheduler) scheduleRunning(budget *int) (preempted bool) {
	for i := 0; i < len(s.running) && *budget > 0; i++ {
		q := s.running[i]
		if q.cancelled.Load() {
			s.free(q)
			continue
		}
		n := q.chunk
		if q.prefilling {
			n = min(q.prefillTarget-q.computed, *budget)
		} else if n > *budget {
			continue
		}
		for !q.done && !s.makeRoom(n) {
			preempted = s.preemptLast() || preempted
		}
		if q.done { // q itself was the last running sequence and went back to the queue
			break
		}
		s.plan = append(s.plan, planned{q, n, q.computed})
		s.kvUsed += n
		*budget -= n
	}
	return preempted
}

// preemptLast sends the most recently admitted running sequence back to the front of the
// queue, freeing its KV cache (vLLM's recompute preemption). It reports whether a live
// sequence was preempted (a cancelled one at the tail is just dropped).
func (s *scheduler) preemptLast() bool {
	v := s.running[len(s.running)-1]
	s.running = s.running[:len(s.running)-1]
	if v.done { // cancelled earlier in this step: already freed, nothing to requeue
		return false
	}
	s.releaseKV(v)
	v.prefillTarget, v.prefilling = v.prompt+v.generated, true
	v.done = true // "not running" for the rest of this step; cleared on re-admission
	s.waiting = append([]*seq{v}, s.waiting...)
	s.preemptions++
	v.preempted++
	return true
}

// admitWaiting moves queued sequences into the batch with their first prefill chunk.
func (s *scheduler) admitWaiting(budget *int) {
	s.lora.beginAdmit(s.running)
	for i := 0; i < len(s.waiting) && len(s.running) < s.maxSeqs && *budget > 0; {
		q := s.waiting[i]
		if q.cancelled.Load() {
			s.dropWaiting(i)
			continue
		}
		if !s.lora.admits(q) { // another adapter would be one too many: skipped, as vLLM does
			i++
			continue
		}
		hit, freeHit := s.matchPrefix(q)
		n := min(q.prefillTarget-len(hit)*s.m.blockSize, *budget)
		if !s.fits(n, freeHit) {
			return // head-of-line: wait for KV to be freed, as vLLM does
		}
		s.dropWaiting(i)
		s.holdPrefix(q, hit)
		s.makeRoom(n)
		q.done = false
		s.running = append(s.running, q)
		s.plan = append(s.plan, planned{q, n, q.computed})
		s.kvUsed += n
		*budget -= n
	}
}

// dropWaiting removes waiting[i], cheaply at the head.
func (s *scheduler) dropWaiting(i int) {
	if i == 0 {
		s.waiting = s.waiting[1:]
		return
	}
	s.waiting = slices.Delete(s.waiting, i, i+1)
}

// apply performs a planned share: KV grows, and a finished prefill or a decode emits tokens.
func (s *scheduler) apply(p planned) {
	q := p.q
	take := s.spec.take(q, !q.prefilling)
	if s.spec != nil && !q.prefilling { // the rejected drafts' KV is dropped
		rejected := p.n - take
		q.computed -= rejected
		s.kvUsed -= rejected
	}
	q.computed += p.n
	if s.cache != nil {
		s.cacheBlocks(q)
	}
	if q.prefilling {
		if q.computed < q.prefillTarget {
			return
		}
		q.prefilling = false // the last prefill chunk samples the next token
	}
	prev := q.generated
	q.generated += min(take, q.target-q.generated)
	if q.hasher.size > 0 {
		for i := prev; i < q.generated; i++ {
			q.hasher.add(outputIDs[outputWord(q.textSeed, i)])
		}
	}
	s.emitted = append(s.emitted, q)
	if q.generated >= q.target {
		s.free(q)
	}
}

// free releases a finished or cancelled sequence's KV cache.
func (s *scheduler) free(q *seq) {
	if !q.done {
		s.releaseKV(q)
		q.done = true
	}
}

// compactRunning drops finished and cancelled sequences from the batch, keeping order.
func (s *scheduler) compactRunning() {
	kept := s.running[:0]
	for _, q := range s.running {
		if !q.done {
			kept = append(kept, q)
		}
	}
	clear(s.running[len(kept):])
	s.running = kept
}

// resetPrefixCache evicts every free cached block (those no running sequence holds).
func (s *scheduler) resetPrefixCache() {
	for s.cache != nil && s.cache.evict() {
		s.kvUsed -= s.m.blockSize
	}
}

// makeRoom reports whether n more tokens fit in the KV cache, first evicting free cached
// blocks, least recently used first, as far as needed.
func (s *scheduler) makeRoom(n int) bool {
	if !s.fits(n, 0) {
		return false
	}
	for s.kvUsed+n > s.m.kvCapacity && s.cache.evict() {
		s.kvUsed -= s.m.blockSize
	}
	return true
}

// fits reports whether n more tokens would fit after evicting every free cached block but
// the keep free ones a newcomer is about to hold.
func (s *scheduler) fits(n, keep int) bool {
	evictable := 0
	if s.cache != nil {
		evictable = s.cache.free - keep
	}
	return s.kvUsed-evictable*s.m.blockSize+n <= s.m.kvCapacity
}

// releaseKV frees q's KV: its own tokens go, the cached blocks it held stay cached but free
// to be evicted. The tail blocks are released first so that they are evicted first: the
// head of a prompt is the part other requests are likeliest to share (vLLM's order).
func (s *scheduler) releaseKV(q *seq) {
	s.kvUsed -= q.computed - len(q.blocks)*s.m.blockSize
	for i := len(q.blocks) - 1; i >= 0; i-- {
		s.cache.release(q.blocks[i])
	}
	clear(q.blocks)
	q.blocks, q.computed = q.blocks[:0], 0
}

// kvInUse is the KV the running sequences hold: vLLM counts free cached blocks as free.
func (s *scheduler) kvInUse() int {
	if s.cache == nil {
		return s.kvUsed
	}
	return s.kvUsed - s.cache.free*s.m.blockSize
}
