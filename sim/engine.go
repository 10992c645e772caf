package sim

import (
	"container/heap"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// engine is the one goroutine that advances the simulated server. It follows a schedule of
// virtual step end times laid on the wall clock: it sleeps until a step's end, then releases
// that step's tokens to the stream handlers at once. When it wakes late (GC, an overloaded
// machine) it records the lag and carries on without sleeping, so the schedule is kept and
// the lag is visible through Server.Lag.
//
// We use one timer for the whole engine, not one per stream or per token: at 2,000 streams a
// timer per token would be 100,000 timer wake-ups per second of their own.
type engine struct {
	sched    *scheduler    // model mode
	spec     *specDecoder  // speculative decoding; nil = off
	adapters []string      // LoRA adapter names, for vllm:lora_requests_info
	cost     *startupCost  // model mode with a start-up cost or throttling on; nil otherwise
	truth    *truthLog     // where phase changes are logged; nil = nowhere
	spans    *spanExporter // where finished requests' spans go (otlp.go); nil = nowhere
	fixed    *fixedClock
	stats    *simStats
	lag      lagRecorder
	submit   chan *seq
	stop     chan struct{}
	done     chan struct{}
	timer    *time.Timer
}

// errStopped is returned to handlers when the engine has shut down.
var errStopped = errors.New("simulator is shutting down")

// fixedSlack lets a fixed-mode wake-up release tokens due within this much of now, so that
// streams whose due times nearly coincide share one wake-up instead of one each.
const fixedSlack = 100 * time.Microsecond

func newEngine(c *Config, m *model, stats *simStats) *engine {
	e := &engine{stats: stats, submit: make(chan *seq, 4096), stop: make(chan struct{}),
		done: make(chan struct{}), timer: time.NewTimer(time.Hour)}
	e.timer.Stop()
	e.spec = newSpecDecoder(c.SpecTokens, c.SpecAcceptance, c.Seed)
	if c.FixedMode() {
		e.fixed = &fixedClock{ttft: c.TTFT, itl: c.ITL, jitter: c.Jitter,
			rng: rand.New(rand.NewPCG(uint64(c.Seed), 0x51b))}
	} else {
		e.sched = newScheduler(m, c.MaxNumSeqs, c.MaxNumBatchedTokens)
		if !c.NoPrefixCache {
			e.sched.cache = newPrefixCache()
		}
		e.cost = newStartupCost(c)
		e.sched.spec, e.sched.lora, e.adapters = e.spec, newLoRASlots(c), c.Adapters
	}
	return e
}

func (e *engine) start() {
	go func() {
		defer close(e.done)
		if e.fixed != nil {
			e.runFixed()
		} else {
			e.runModel()
		}
	}()
}

// close stops the engine goroutine and waits for it.
func (e *engine) close() {
	select {
	case <-e.stop:
	default:
		close(e.stop)
	}
	<-e.done
}

// add hands a new sequence to the engine. It blocks only while the submit buffer is full.
func (e *engine) add(q *seq, cancel <-chan struct{}) error {
	select {
	case e.submit <- q:
		return nil
	case <-e.stop:
		return errStopped
	case <-cancel:
		return errors.New("client went away")
	}
}

// accept takes a newly submitted sequence into the engine's own state.
func (e *engine) accept(q *seq) {
	if q.reset != nil {
		if e.sched != nil {
			e.sched.resetPrefixCache()
		}
		close(q.reset)
		return
	}
	if e.fixed != nil {
		e.fixed.add(q)
		e.stats.running.Store(int64(len(e.fixed.h)))
		return
	}
	e.sched.add(q)
	e.stats.waiting.Add(1)
}

// waitArrival blocks until a sequence arrives; false when the engine stops.
func (e *engine) waitArrival() bool {
	select {
	case q := <-e.submit:
		e.accept(q)
		return true
	case <-e.stop:
		return false
	}
}

// drain accepts every already-submitted sequence without blocking.
func (e *engine) drain() {
	for {
		select {
		case q := <-e.submit:
			e.accept(q)
		default:
			return
		}
	}
}

// sleepUntil waits for the wall clock to reach t, accepting arrivals meanwhile. With
// interruptible it returns early on an arrival (fixed mode: the newcomer may be due first).
// It returns false when the engine stops.
func (e *engine) sleepUntil(t time.Time, interruptible bool) bool {
	for {
		d := time.Until(t)
		if d <= 0 {
			return true
		}
		e.timer.Reset(d)
		select {
		case <-e.timer.C:
			return true
		case q := <-e.submit:
			e.accept(q)
			if interruptible {
				e.timer.Stop()
				return true
			}
		case <-e.stop:
			e.timer.Stop()
			return false
		}
	}
}

// runModel drives the continuous-batching scheduler in real time.
func (e *engine) runModel() {
	var t time.Time // start of the next step on the virtual schedule
	for {
		if e.sched.idle() {
			if !e.waitArrival() {
				return
			}
			t = time.Now() // an idle engine starts the step when the request arrives
		}
		e.drain()
		dur, ph := modelStep(e.sched, e.cost, t) // the step Virtual takes too (virtual.go)
		e.stats.markScheduled(e.sched.plan, t)
		e.publishGauges()
		if dur == 0 { // nothing schedulable this step (e.g. cancelled): retry shortly, never spin
			t = time.Now().Add(time.Millisecond)
			if !e.sleepUntil(t, true) {
				return
			}
			continue
		}
		if ph.throttleStart {
			e.markPhase("throttle_start", t)
		}
		end := t.Add(dur)
		if !e.sleepUntil(end, false) {
			return
		}
		e.lag.record(time.Since(end))
		e.release(e.sched.emitted, end)
		if ph.coldEnd { // after the release: the last cold step's tokens are out when it is logged
			e.markPhase("cold_end", end)
		}
		if ph.compiled {
			e.markPhase("compile", end)
		}
		t = end
	}
}

func (e *engine) publishGauges() {
	s := e.sched
	e.stats.running.Store(int64(len(s.running)))
	e.stats.waiting.Store(int64(len(s.waiting)))
	e.stats.deferred.Store(s.lora.deferred(s.waiting))
	if s.lora != nil {
		info := s.lora.info(e.adapters, s.running, s.waiting)
		e.stats.loraInfo.Store(&info)
	}
	e.stats.kvUsed.Store(int64(s.kvInUse()))
	e.stats.preemptions.Store(s.preemptions)
	e.stats.prefixQueries.Store(s.queries)
	e.stats.prefixHits.Store(s.hits)
}

// release makes the tokens of one step visible to their stream handlers.
func (e *engine) release(qs []*seq, at time.Time) {
	e.stats.observeStep(qs...)
	for _, q := range qs {
		e.releaseOne(q, at)
	}
}

// releaseOne publishes q's generated count, records engine-side TTFT/ITL like vLLM does,
// and wakes the handler.
func (e *engine) releaseOne(q *seq, at time.Time) {
	prev := int(q.released.Load())
	e.stats.onRelease(q, prev, at)
	if prev == 0 {
		e.stats.onFirstToken(q)
		e.stats.ttft.observe(at.Sub(q.arrival))
		e.stats.promptTokens.Add(int64(q.prompt))
	} else {
		e.stats.itl.observe(at.Sub(q.lastEmit))
	}
	q.lastEmit = at
	e.stats.genTokens.Add(int64(q.generated - prev))
	q.released.Store(int64(q.generated))
	if q.generated >= q.target {
		q.finished.Store(true)
		e.finishSpan(q, at) // otlp.go
	}
	q.wake()
}

// runFixed drives fixed mode: a min-heap of next release times, one timer.
func (e *engine) runFixed() {
	f := e.fixed
	for {
		if len(f.h) == 0 && !e.waitArrival() {
			return
		}
		e.drain()
		if len(f.h) == 0 {
			continue
		}
		if !e.sleepUntil(f.h[0].due, true) {
			return
		}
		now := time.Now()
		for len(f.h) > 0 && f.h[0].due.Sub(now) <= fixedSlack {
			q := f.h[0]
			if q.cancelled.Load() {
				heap.Pop(&f.h)
				continue
			}
			e.lag.record(now.Sub(q.due))
			q.generated += min(e.spec.take(q, q.generated > 0), q.target-q.generated)
			e.stats.observeStep(q) // no steps in fixed mode: each release is its own iteration
			e.releaseOne(q, q.due)
			if q.generated >= q.target {
				heap.Pop(&f.h)
			} else {
				q.due = q.due.Add(f.delay(f.itl))
				heap.Fix(&f.h, 0)
			}
		}
		e.stats.running.Store(int64(len(f.h)))
	}
}

// fixedClock is fixed mode's state: delays and the heap of sequences by next due time.
type fixedClock struct {
	ttft, itl, jitter time.Duration
	rng               *rand.Rand
	h                 seqHeap
}

func (f *fixedClock) add(q *seq) {
	q.due = q.arrival.Add(f.delay(f.ttft))
	heap.Push(&f.h, q)
}

// delay is d jittered uniformly in [d−jitter, d+jitter], never negative.
func (f *fixedClock) delay(d time.Duration) time.Duration {
	if f.jitter > 0 {
		d += time.Duration(f.rng.Int64N(int64(2*f.jitter)+1)) - f.jitter
	}
	return max(d, 0)
}

// seqHeap orders sequences by due time (container/heap).
type seqHeap []*seq

func (h seqHeap) Len() int           { return len(h) }
func (h seqHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h seqHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex, h[j].heapIndex = i, j
}
func (h *seqHeap) Push(x any) {
	q := x.(*seq)
	q.heapIndex = len(*h)
	*h = append(*h, q)
}
func (h *seqHeap) Pop() any {
	old := *h
	q := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return q
}

// LagStats is how far the engine fell behind its own schedule: for every step (model mode)
// or token release (fixed mode), wake-up time minus scheduled time.
type LagStats struct {
	Samples int64
	P50     time.Duration
	P99     time.Duration
	Max     time.Duration
}

// lagRecorder keeps the most recent lag samples in a ring (bounded memory) and the
// all-time maximum.
type lagRecorder struct {
	mu    sync.Mutex
	ring  []time.Duration
	next  int
	total int64
	max   time.Duration
}

const lagRingSize = 1 << 16

func (l *lagRecorder) record(d time.Duration) {
	d = max(d, 0)
	l.mu.Lock()
	if len(l.ring) < lagRingSize {
		l.ring = append(l.ring, d)
	} else {
		l.ring[l.next] = d
		l.next = (l.next + 1) % lagRingSize
	}
	l.total++
	l.max = max(l.max, d)
	l.mu.Unlock()
}

func (l *lagRecorder) stats() LagStats {
	l.mu.Lock()
	s := slices.Clone(l.ring)
	st := LagStats{Samples: l.total, Max: l.max}
	l.mu.Unlock()
	if len(s) == 0 {
		return st
	}
	slices.Sort(s)
	st.P50 = s[(len(s)-1)*50/100]
	st.P99 = s[(len(s)-1)*99/100]
	return st
}
