package sim

import (
	"errors"
	"strconv"
	"time"
)

// Virtual runs the simulator's engine model — the same scheduler, roofline and start-up
// costs as the HTTP server's engine — in virtual time: no goroutine, no timer, no socket.
// A driver submits requests at the current virtual instant and calls Step, which runs one
// engine step and moves the clock to its end; when the engine is idle the driver moves the
// clock itself (AdvanceTo). A million tokens take well under a second, so validation
// matrices of hundreds of runs are cheap (package vtime).
//
// The HTTP engine (engine.runModel) lays the same steps on the wall clock: it is the one
// place that sleeps. Both take each step from modelStep, so the two cannot drift apart.
// What Virtual leaves out is what only the HTTP path has: the prefix cache (a driver's
// prompts are token counts, not text), EOS draws (each request generates exactly its
// output count, as with ignore_eos), faults, truth logs and /metrics.
type Virtual struct {
	sched  *scheduler
	cost   *startupCost
	origin time.Time // virtual instant 0 as a time.Time, for startupCost's schedule
	now    time.Duration
	steps  int64
	ids    map[*seq]int
	out    []Emit

	coldEnd, throttleStart time.Duration
}

// Emit is one request's share of a step: it has now generated Generated output tokens, and
// Done says it has all of them.
type Emit struct {
	ID        int
	Generated int
	Done      bool
}

// NewVirtual validates c and builds its engine model in virtual time. Fixed mode (--ttft,
// --itl) has no engine model and is refused.
func NewVirtual(c Config) (*Virtual, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.FixedMode() {
		return nil, errors.New("virtual time runs the engine model; fixed mode (--ttft, --itl) has none")
	}
	m, err := newModel(&c)
	if err != nil {
		return nil, err
	}
	return &Virtual{sched: newScheduler(m, c.MaxNumSeqs, c.MaxNumBatchedTokens), cost: newStartupCost(&c),
		origin: time.Unix(0, 0), ids: make(map[*seq]int)}, nil
}

// Now is the virtual time since the engine was made.
func (v *Virtual) Now() time.Duration { return v.now }

// Idle reports that no request is queued or running: Step would do nothing.
func (v *Virtual) Idle() bool { return v.sched.idle() }

// AdvanceTo moves the clock forward to t (never back). Use it while the engine is idle, to
// reach the next arrival; a busy engine's clock moves only by Step.
func (v *Virtual) AdvanceTo(t time.Duration) { v.now = max(v.now, t) }

// Submit queues request id, of prompt input tokens and output tokens to generate, arriving
// now.
func (v *Virtual) Submit(id, prompt, output int) {
	q := newSeq(strconv.Itoa(id), max(prompt, 1), max(output, 1), 1, 0, v.origin.Add(v.now))
	v.ids[q] = id
	v.sched.add(q)
}

// Step runs one engine step starting now, moves the clock to its end and returns the
// requests that produced tokens in it (valid until the next call). An idle engine returns
// nothing and keeps its clock.
func (v *Virtual) Step() []Emit {
	if v.sched.idle() {
		return nil
	}
	start := v.origin.Add(v.now)
	dur, ph := modelStep(v.sched, v.cost, start)
	if dur == 0 { // nothing schedulable: the HTTP engine retries after 1 ms
		v.now += time.Millisecond
		return nil
	}
	if ph.throttleStart {
		v.throttleStart = v.now
	}
	v.now += dur
	v.steps++
	if ph.coldEnd {
		v.coldEnd = v.now
	}
	v.out = v.out[:0]
	for _, q := range v.sched.emitted {
		v.out = append(v.out, Emit{ID: v.ids[q], Generated: q.generated, Done: q.generated >= q.target})
		if q.generated >= q.target {
			delete(v.ids, q)
		}
	}
	return v.out
}

// Steps is the number of engine steps taken.
func (v *Virtual) Steps() int64 { return v.steps }

// ColdEnd is the end of the last cold step (0 before it, or without a cold phase), the
// virtual counterpart of /version's phases.cold_end_ns.
func (v *Virtual) ColdEnd() time.Duration { return v.coldEnd }

// ThrottleStart is the start of the first throttled step (0 before it, or without
// throttling).
func (v *Virtual) ThrottleStart() time.Duration { return v.throttleStart }

// modelStep plans and applies one engine step starting at start and returns its duration
// with its start-up costs, and what phase it changed. 0 means nothing was schedulable.
func modelStep(s *scheduler, cost *startupCost, start time.Time) (time.Duration, stepPhase) {
	dur := s.step()
	if dur == 0 || cost == nil {
		return dur, stepPhase{}
	}
	d, ph := cost.next(dur, s.stepTokens, start)
	if c := cost.compile(s.stepSeqs, s.stepPrefill); c > 0 {
		d += c
		ph.compiled = true
		cost.logCompile(start, start.Add(d), s.stepSeqs, s.stepPrefill)
	}
	return d, ph
}
