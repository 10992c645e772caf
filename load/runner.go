// Package load drives a Backend with a fixed workload under a load shape — closed loop
// (N users) or open loop (an arrival schedule with an optional concurrency cap) — and emits
// one record per request.
package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"servebench/client"
	"servebench/load/pacer"
	"servebench/record"
	"servebench/schema"
	"servebench/spans"
	"servebench/workload"
)

// Config is the load shape and stop rules of one run.
type Config struct {
	// Concurrency is the number of closed-loop users; used when Pacer is nil.
	Concurrency int
	// Pacer is the open-loop arrival schedule; nil means closed loop.
	Pacer pacer.Pacer
	// MaxConcurrency caps requests in flight in open loop (0: no cap). Requests that wait
	// for a slot keep their scheduled time, so their queue time is recorded, not hidden.
	MaxConcurrency int
	// Warmup is how many requests are sent first, under the same load shape, as phase warmup.
	Warmup int
	// NoWarmupDrain lets a closed loop's users send their first measured request as soon as
	// their own warmup request ended, instead of waiting for the whole warmup to end
	// (drain.go). Only for measuring the client itself (selftest), where the server never
	// queues and the barrier would hold every stream back to release them at once.
	NoWarmupDrain bool
	// Requests is the number of measured requests (0: until Duration).
	Requests int
	// Duration stops sending measured requests this long after the first was dispatched.
	Duration time.Duration
	// WarmupDuration and CooldownDuration bound the steady-state window of a Duration run:
	// requests sent in the first WarmupDuration of it are phase warmup, those sent in its
	// last CooldownDuration phase cooldown; only those in between are measured. Both lie
	// inside Duration.
	WarmupDuration, CooldownDuration time.Duration
	// MaxErrors stops sending once this many requests failed (0: no limit). MaxErrorRate stops
	// sending once the share of failed requests exceeds it, judged after errorRateMin
	// finished requests (0: no limit). Requests cancelled by our own stop never count.
	MaxErrors    int
	MaxErrorRate float64
	// Grace is how long in-flight requests may finish after sending stops early (Ctrl-C, the
	// end of Duration, an error limit) before they are cancelled and recorded as cancelled.
	Grace time.Duration
	// RequestTimeout bounds one request (0: none); expiry is error class timeout.
	RequestTimeout time.Duration
	// Run is written into every record (repeat or sweep index).
	Run int
	// WarmupAuto keeps warming, at the run's own load shape, until the warmup stops moving
	// (warmup.go, stat.WarmupJudge): at least WarmupMin requests, at most WarmupMax or
	// WarmupTimeout, judged over windows of the token gaps as they stream, whose ITL must
	// agree within WarmupTolerance, with no trend, over the last three (or, from the tenth
	// window, show no falling trend over the last six). Warmup is then unused.
	WarmupAuto      bool
	WarmupMin       int
	WarmupMax       int
	WarmupTimeout   time.Duration
	WarmupTolerance float64
	// ThinkTime is the pause between a session's answer and its next turn (multi-turn
	// sessions); with ThinkExp each pause is drawn from an exponential distribution of that
	// mean, seeded per session by ThinkSeed, so the pauses repeat exactly.
	ThinkTime time.Duration
	ThinkExp  bool
	ThinkSeed int64
	// Offset is where this run's arrival schedule starts, from t0: a sweep runs several
	// points against one t0 (one records file), each point's schedule starting at its own
	// offset.
	Offset time.Duration
	// Stages, when set, are load stages run one after the other (stages.go): closed loop,
	// each stage's Users of Concurrency users send; open loop, Pacer is their schedule.
	// Duration is their sum.
	Stages []record.Stage
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case c.Pacer == nil && c.Concurrency < 1:
		return errors.New("--concurrency must be at least 1")
	case c.MaxConcurrency < 0:
		return errors.New("--max-concurrency must not be negative")
	case c.Warmup < 0:
		return errors.New("--warmup must not be negative")
	case c.Requests < 0 || c.Duration < 0:
		return errors.New("--requests and --duration must not be negative")
	case c.Requests == 0 && c.Duration == 0:
		return errors.New("give --requests or --duration")
	case c.WarmupDuration < 0 || c.CooldownDuration < 0:
		return errors.New("--warmup-duration and --cooldown-duration must not be negative")
	case (c.WarmupDuration > 0 || c.CooldownDuration > 0) && c.WarmupDuration+c.CooldownDuration >= c.Duration:
		return errors.New("--warmup-duration + --cooldown-duration must be shorter than --duration")
	case c.MaxErrors < 0 || c.MaxErrorRate < 0 || c.MaxErrorRate > 1:
		return errors.New("--max-errors must not be negative and --max-error-rate must be in [0, 1]")
	}
	return nil
}

// Runner sends a workload. Sink receives every record from a single goroutine, in completion
// order; an error from Sink stops the run.
type Runner struct {
	Backend  client.Backend
	Template client.Request // model, fixed output and sampling; Request field is set per request
	Workload []workload.Request
	// PromptSource is the source named for prompt token counts taken from the workload when
	// the server reports none (record.SourceTokenizer when built with the server's tokenizer).
	PromptSource string
	Sink         func(*record.Record) error
	// OnEnd, when set, is told at the end of Run what the records alone cannot say: why
	// sending stopped, the open loop's unsent arrivals and the stamp counts. It is called on
	// Run's goroutine.
	OnEnd func(Outcome)
	// ID, when set, maps the runner's request index to the record ID (a shard's j-th request
	// is request j·n+i of the whole run), which also picks the workload request (ID modulo
	// the workload's length); nil keeps the index.
	ID func(i int) int
	// KernelClock says the backend's connections were asked for kernel receive times (run
	// --arrival-clock kernel): event stamps that had to fall back to the read time are
	// counted (Outcome.ReadStamps).
	KernelClock bool
	// TraceIDs, when set, gives every request a W3C traceparent header, its trace id kept in
	// its record (Record.TraceID); nil sends none (run --no-trace-context).
	TraceIDs *spans.IDs
	// SessionHeader, when set, is the canonical name of the header that carries each
	// session's key, "<run>-<session>", on every turn, and a replayed trace's row's recorded
	// key (workload.Request.SessionKey) (run --session-header).
	SessionHeader string
	// KernelSends says the connections were asked for kernel send times (run --send-clock
	// kernel): send stamps that had to fall back to the write hook are counted
	// (Outcome.WriteSends).
	KernelSends bool
	// Judge, when set, scores every completed request's answer text (answers.go).
	Judge Judge
	// Repeats, when set, is each Workload request's share of its prompt that begins as a
	// request before it in Workload (workload.Repeats), so each record can say what it repeats
	// by design: its share the first time the run sends it, all of it after (repeated.go).
	// nil: records say nothing.
	Repeats []float64
	// Warm is how many requests at the start of Workload are the warmup's own (whole sessions,
	// for a multi-turn workload): warmup request k sends Workload[k mod Warm] and measured
	// request m Workload[Warm + m mod (len−Warm)], so no measured request repeats a warmup
	// prompt however long --warmup auto warms. 0 (or a sharded run, whose record IDs pick)
	// sends request i Workload[ID(i) mod len], as a replay of a prompts file asks.
	Warm int
	// Finished, when set, is called with each record on its request's goroutine as soon as
	// the backend has returned, before the record is queued for Sink (selftest counts the
	// streams held open with it). Calls are concurrent.
	Finished func(*record.Record)
	// ToolSchemas are the offered tools' parameters schemas by name, which every streamed tool
	// call is checked against (tools.go); nil: no tools were offered, calls are checked for
	// JSON only. Agent, when set, runs a multi-turn workload as agent tasks (agents.go).
	ToolSchemas map[string]*schema.Schema
	Agent       *Agent
	// Live, when set, counts requests in flight, streamed tokens and first tokens as they
	// happen, for a progress line (nil: nothing is counted).
	Live *Live
	// Follows, when set, gives each Workload request of a replayed trace the turn of its
	// session it follows (workload.Trace.Follows): in open loop it is sent no earlier than
	// that turn's end plus the recorded gap (follow.go). nil: every arrival is sent on time.
	Follows []*workload.Follow
	// VirtualClock says the runner runs in a synctest bubble (package vtime): requests made
	// ahead of their scheduled time wait for it with timers alone (ontime.go).
	VirtualClock bool
}

// Outcome is what a Run reports at its end (Runner.OnEnd).
type Outcome struct {
	// Stop says why sending stopped, StopDetail why a stop rule fired (record.RunEnd).
	Stop, StopDetail string
	// Unsent counts the open loop's arrivals that were due but never dispatched
	// (record.RunEnd.Unsent).
	Unsent int
	// CancelledBy says what cancelled the requests in flight: CancelGrace, CancelHard or ""
	// (record.RunEnd.CancelledBy).
	CancelledBy string
	// Stamps and ReadStamps count measured content events and those stamped at the read,
	// with KernelClock (record.Quality); zero without it.
	Stamps, ReadStamps int64
	// Sends and WriteSends count measured requests' send stamps and those taken at the write
	// hook, with KernelSends (record.Quality); zero without it.
	Sends, WriteSends int64
	// WarmupRequests and WarmupStop say, with Config.WarmupAuto, how many warmup requests were
	// sent and why warming stopped ("converged", "max requests", "max time"; record.RunEnd).
	WarmupRequests int
	WarmupStop     string
	// WarmupWindows is how many windows the warmup judge closed, with Config.WarmupAuto.
	WarmupWindows int
	// Held is how a replayed trace's later turns of a session waited for the turns before
	// them (Runner.Follows); nil without such turns. Held turns that were never sent are
	// counted in Unsent too.
	Held *Held
}

// Run sends requests until a stop rule is met or soft is cancelled (first Ctrl-C: stop
// sending, let in-flight requests finish within Config.Grace). Cancelling hard (second
// Ctrl-C) cancels in-flight requests at once; they are recorded as cancelled. t0 is the run
// start that every timestamp is measured from.
func (r *Runner) Run(soft, hard context.Context, t0 time.Time, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if len(r.Workload) == 0 {
		return errors.New("empty workload")
	}
	reqCtx, cancelReqs := context.WithCancel(hard)
	defer cancelReqs()
	sending, stopSending := context.WithCancel(soft)
	defer stopSending()
	out := make(chan *record.Record, 4096)
	st := &state{r: r, cfg: cfg, t0: t0, sending: sending, reqCtx: reqCtx, out: out}
	st.stopper = newStopper(cfg.Grace, stopSending, cancelReqs)
	st.stopper.maxErrors, st.stopper.maxRate = cfg.MaxErrors, cfg.MaxErrorRate
	defer st.stopper.disarm()
	sinkErr := make(chan error, 1)
	go func() { sinkErr <- r.drain(out, st) }()
	// first Ctrl-C: stop sending; in-flight requests get the grace period
	stopSoft := context.AfterFunc(soft, func() { st.stopper.stop(StopInterrupted, "", true) })
	defer stopSoft()
	unsent := 0
	switch {
	case sessionsOf(r.Workload) != nil:
		st.sessions = true
		unsent = st.sessionLoop(sessionsOf(r.Workload))
	case cfg.Pacer == nil:
		st.closedLoop()
	default:
		unsent = st.openLoop()
	}
	st.inflight.Wait()
	close(out)
	err := <-sinkErr
	if r.OnEnd != nil {
		out := Outcome{Unsent: unsent, Stamps: st.clock.total.Load(), ReadStamps: st.clock.read.Load(),
			Sends: st.clock.sends.Load(), WriteSends: st.clock.writeSends.Load()}
		out.Stop, out.StopDetail = st.stopper.why()
		out.CancelledBy = st.stopper.cancelledBy(hard)
		out.WarmupRequests, out.WarmupStop = st.warm.result(st)
		out.WarmupWindows = st.warm.windows()
		if out.Held = st.heldResult(); out.Held != nil {
			out.Unsent += out.Held.Lost
		}
		r.OnEnd(out)
	}
	return err
}

// drain hands records to the sink and feeds the error stop rules; after a sink error it
// cancels the run and discards.
func (r *Runner) drain(out <-chan *record.Record, st *state) error {
	stp := st.stopper
	var err error
	for rec := range out {
		if err != nil {
			continue
		}
		stp.count(rec)
		st.observeWarmup(rec)
		if err = r.Sink(rec); err != nil {
			stp.stop(StopSink, err.Error(), false)
			stp.cancelReqs()
			err = fmt.Errorf("write records: %w", err)
		}
	}
	return err
}

// state is one run in progress.
type state struct {
	r       *Runner
	cfg     Config
	t0      time.Time
	sending context.Context // cancelled when sending stops, for any reason
	reqCtx  context.Context
	out     chan<- *record.Record
	stopper *stopper

	mu            sync.Mutex
	warm          autoWarm                            // --warmup auto (warmup.go)
	sess          struct{ begun, warm, measured int } // sessions begun (sessions.go)
	next          int                                 // next request index
	mStart        int64                               // ns since t0 when the first measured request was taken
	measuring     bool                                // mStart is set (0 is a legitimate start: an open loop's first arrival)
	stopAt        int64                               // ns since t0 after which no measured request is sent (0: not yet known)
	warmOut       int                                 // closed loop: warmup requests in flight (drain.go)
	drained       chan struct{}                       // closed loop: closed when warmOut falls to 0 with users waiting
	warmE2E       []int64                             // closed loop: each warmup request's send-to-end time, ns (drain.go)
	sessions      bool                                // multi-turn sessions (sessions.go): no drain, no ramped warmup
	released      int                                 // closed loop: users released from the drain so far (drain.go)
	staggerPeriod int64                               // closed loop: the stagger period, ns, once released (spreadPeriod, drain.go)
	inflight      sync.WaitGroup
	clock         clockCount // event stamps, with KernelClock
	sent          sentSlots  // the workload requests sent so far, with Runner.Repeats (repeated.go)
	chain         follows    // a replayed trace's sessions, with Runner.Follows (follow.go)
}

// pick is a request to send: its index in the run, the workload request it sends, and its
// phase.
type pick struct {
	i, slot int
	phase   string
	stage   int             // load stage (stages.go)
	warm    bool            // a closed loop's warmup request, counted in warmOut until it ends
	wait    <-chan struct{} // not a request: wait for the warmup to drain, then take again
}

// take returns the next request to send, or false when a stop rule says sending is over. now
// is the ns offset at which the caller would dispatch it (open loop: its scheduled time, so
// phases follow the schedule, not the sender's lateness).
func (s *state) take(now int64) (pick, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sending.Err() != nil || s.reqCtx.Err() != nil {
		return pick{}, false
	}
	i := s.next
	p := pick{i: i, slot: s.r.slot(i, -1), phase: record.PhaseWarmup}
	if measured := i - s.warmupCount(now); measured >= 0 {
		if s.cfg.Requests > 0 && measured >= s.cfg.Requests {
			s.stopper.stop(StopRequests, "", false)
			return pick{}, false
		}
		if wait := s.drainWait(); wait != nil {
			return pick{wait: wait}, true
		}
		if !s.measuring {
			s.startMeasuring(now)
		}
		if s.stopAt > 0 && now >= s.stopAt {
			s.stopper.stop(StopDuration, "", true)
			return pick{}, false
		}
		p.slot, p.phase = s.r.slot(i, measured), s.phaseAt(now)
		p.stage, _ = s.stageLocked(now)
	} else {
		if wait := s.midWait(i); wait != nil {
			return pick{wait: wait}, true
		}
		s.sentWarmup(i, now)
		if s.cfg.Pacer == nil {
			p.warm = true
			s.warmOut++
		}
	}
	s.next++
	return p, true
}

// slot is the workload request that request i sends: measured is its index among the
// measured requests, or −1 for a warmup request (see Runner.Warm).
func (r *Runner) slot(i, measured int) int {
	n := len(r.Workload)
	switch {
	case r.Warm <= 0 || r.Warm >= n || r.ID != nil:
		return r.recordID(i) % n
	case measured < 0:
		return i % r.Warm
	}
	return r.Warm + measured%(n-r.Warm)
}

// startMeasuring notes when the measured phase began and arms the Duration stop: a timer,
// so that a closed loop whose users are all busy still stops on time.
func (s *state) startMeasuring(now int64) {
	s.mStart, s.measuring = now, true
	if s.cfg.Duration <= 0 {
		return
	}
	s.stopAt = now + int64(s.cfg.Duration)
	s.stopper.after(time.Until(s.t0.Add(time.Duration(s.stopAt))), StopDuration)
}

// phaseAt is the phase of a measured-phase request sent at now: the steady-state window
// excludes the first WarmupDuration and the last CooldownDuration of Duration.
func (s *state) phaseAt(now int64) string {
	switch {
	case s.cfg.WarmupDuration > 0 && now < s.mStart+int64(s.cfg.WarmupDuration):
		return record.PhaseWarmup
	case s.cfg.CooldownDuration > 0 && now >= s.stopAt-int64(s.cfg.CooldownDuration):
		return record.PhaseCooldown
	}
	return record.PhaseMeasure
}

func (s *state) since() int64 { return int64(time.Since(s.t0)) }

// closedLoop runs Concurrency users; each sends its next request when its last one finished.
// A request's scheduled time is when its user became free.
func (s *state) closedLoop() {
	s.startUsers(s.cfg.Concurrency, func(j int, started func(bool)) {
		timer := time.NewTimer(0)
		defer timer.Stop()
		for s.waitTurn(timer, j) { // always true without stages (stages.go)
			now := s.since()
			p, ok := s.take(now)
			started(ok)
			if !ok {
				return
			}
			if p.wait != nil {
				if !s.awaitDrain(p.wait) {
					return
				}
				continue
			}
			s.inflight.Add(1)
			s.send(p, now)
			if p.warm {
				s.warmEnded(s.since() - now)
			}
		}
		started(false)
	})
}

// startUsers runs user(j, started) for j = 0 … n−1, each in its own goroutine, and waits for
// them all. Users start one after another: user j+1 starts once user j has called started(true)
// (it took its first request), and none after a user calls started(false) (sending is over,
// so no later user would get a request). So --concurrency 100000000 --requests 3 starts four
// users, not a hundred million goroutines, and a stop (Ctrl-C, the end of Duration) ends the
// starting at once; a user resting for a later stage holds the start of those after it, which
// would rest as long.
func (s *state) startUsers(n int, user func(j int, started func(bool))) {
	var users sync.WaitGroup
	for j := range n {
		first := make(chan bool, 1)
		var once sync.Once
		users.Go(func() {
			user(j, func(ok bool) { once.Do(func() { first <- ok }) })
			once.Do(func() { first <- false })
		})
		if !<-first {
			break
		}
	}
	users.Wait()
}

// openLoop dispatches request n at t0 + Pacer.Due(n), each in its own goroutine, waiting for a
// slot when MaxConcurrency is set. The schedule is absolute: a late dispatch does not shift
// later ones. It returns how many arrivals were due before sending stopped but never sent.
func (s *state) openLoop() (unsent int) {
	var slots chan struct{}
	if s.cfg.MaxConcurrency > 0 {
		slots = make(chan struct{}, s.cfg.MaxConcurrency)
	}
	n, ended := s.schedule(func(_ int, due time.Duration) bool {
		p, ok := s.take(int64(due))
		if !ok {
			return false
		}
		mine, prev, gap := s.follow(p) // a later turn of a replayed session waits for its previous one
		if prev != nil {
			s.inflight.Add(1)
			go func() {
				s.sendAfter(p, due, prev, gap, slots)
				s.ended(mine)
			}()
			return true
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
			case <-s.sending.Done():
				return false
			}
		}
		s.inflight.Add(1)
		go func() {
			s.send(p, int64(due))
			s.ended(mine)
			if slots != nil {
				<-slots
			}
		}()
		return true
	})
	if ended {
		return 0
	}
	return s.unsent(n)
}

// schedule calls arrive(n, due) sendLead before t0 + Pacer.Due(n) + Offset, so that the
// request is made by its due time and sent then (ontime.go), for n = 0, 1, … until the
// schedule ends (a StopSchedule stop), sending stops, or arrive refuses. It returns the first
// arrival not handed out, and whether it was the end of the schedule that ended the loop.
func (s *state) schedule(arrive func(n int, due time.Duration) bool) (int, bool) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for n := 0; ; n++ {
		due, ok := s.cfg.Pacer.Due(n)
		if !ok {
			s.stopper.stop(StopSchedule, "", false)
			return n, true
		}
		due += s.cfg.Offset
		if !s.sleepUntil(timer, due-sendLead) || !arrive(n, due) {
			return n, false
		}
	}
}

// Unsent counting: an arrival counts when it was at least unsentSlack late when sending
// stopped (so that a Duration timer firing a few µs before the loop woke for an arrival due
// just before the end does not count it: it was on time), and the walk stops after
// maxUnsentWalk arrivals (a Poisson pacer keeps every offset it computes).
const (
	unsentSlack   = 10 * time.Millisecond
	maxUnsentWalk = 1 << 20
)

// unsent counts the arrivals from n on that were due before sending stopped (the end of
// Duration, or now for any other stop) by at least unsentSlack, and that the run would have
// sent (within Warmup + Requests): they waited for a MaxConcurrency slot, or for a sender
// that was behind, and were never dispatched. At most maxUnsentWalk are counted.
func (s *state) unsent(n int) int {
	end := s.since()
	reason, _ := s.stopper.why()
	s.mu.Lock()
	if reason == StopDuration && s.stopAt > 0 {
		end = s.stopAt
	}
	s.mu.Unlock()
	end -= int64(unsentSlack)
	limit := n + maxUnsentWalk
	if s.cfg.Requests > 0 {
		warm := s.cfg.Warmup
		if s.cfg.WarmupAuto {
			warm, _ = s.warm.result(s) // where warming stopped, not the fixed count
		}
		limit = min(limit, max(warm, 0)+s.cfg.Requests)
	}
	count := 0
	prev := time.Duration(math.MinInt64)
	for k := n; k < limit; k++ {
		due, ok := s.cfg.Pacer.Due(k)
		if !ok || due < prev || int64(due+s.cfg.Offset) >= end {
			break // the schedule ended, overflowed, or reached the end
		}
		prev = due
		count++
	}
	return count
}

// sleepUntil waits until offset due from t0; false when sending was stopped meanwhile.
func (s *state) sleepUntil(timer *time.Timer, due time.Duration) bool {
	d := time.Until(s.t0.Add(due))
	if d <= 0 {
		return s.sending.Err() == nil
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-s.sending.Done():
		return false
	}
}

// send performs request p, scheduled at offset sched, and hands its record to the writer. A
// shard's workload request is picked by the record ID (Runner.slot), so a shard's request k
// is the unsplit run's request k, also when a duration run wraps around the workload.
func (s *state) send(p pick, sched int64) {
	s.sendReq(s.r.recordID(p.i), p.slot, p.phase, sched, p.stage)
}

// sendReq sends workload request slot as record id and queues its record; it reports
// whether the request succeeded.
func (s *state) sendReq(id, slot int, phase string, sched int64, stage int) bool {
	return s.sendStep(id, slot, phase, sched, stage, nil)
}

// sendStep is sendReq for one step of an agent task (a; nil for any other request): the
// step's request carries the task's history, and a learns the step's end and tool calls.
func (s *state) sendStep(id, slot int, phase string, sched int64, stage int, a *agentStep) bool {
	defer s.inflight.Done()
	wreq := &s.r.Workload[slot]
	if a != nil {
		wreq = a.request(wreq)
	}
	rec := &record.Record{
		ID: id, Run: s.cfg.Run, Phase: phase, Scheduled: sched, Session: wreq.Session, Turn: wreq.Turn, Stage: stage,
		InputTokens: wreq.InputTokens, MaxTokens: wreq.OutputTokens, FixedOutput: s.r.Template.FixedOutput,
		Events: make([]record.Event, 0, wreq.OutputTokens+1), Repeats: s.repeated(slot),
	}
	req := s.r.Template
	req.Request = wreq.Materialize() // a lazy prompt's text lives only while it is sent
	if wreq.Adapter != "" {          // vLLM serves a LoRA adapter as a model of its own
		req.Model, rec.Adapter = wreq.Adapter, wreq.Adapter
	}
	req.RequestID = RequestID(rec.Run, rec.ID)
	if s.r.TraceIDs != nil { // made here, before the dispatch stamp: none of it is timed
		req.TraceParent, rec.TraceID = s.r.TraceIDs.Next()
	}
	switch { // the OpenAI backends send the key as "user" too (client.Request)
	case wreq.Session > 0:
		req.SessionHeader, req.SessionKey = s.r.SessionHeader, strconv.Itoa(rec.Run)+"-"+strconv.Itoa(wreq.Session)
	case wreq.SessionKey != "": // a replayed trace's row: the key it was recorded with
		req.SessionHeader, req.SessionKey = s.r.SessionHeader, wreq.SessionKey
	}
	mediaErr := renderMedia(&req, rec)
	ctx := s.reqCtx
	if s.cfg.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
		defer cancel()
	}
	st := &stamp{t0: s.t0, rec: rec, live: s.r.Live, warm: s.streamTo(phase), schemas: s.r.ToolSchemas, virtual: s.r.VirtualClock}
	a.begin(rec)
	st.text.want = s.r.Judge != nil
	warm := phase == record.PhaseWarmup
	s.r.Live.start(warm)
	err := mediaErr
	if err == nil {
		err = s.r.Backend.Do(ctx, &req, st)
	}
	s.r.Live.end(warm)
	st.finish(s.r.PromptSource)
	if err != nil {
		classify(rec, err, ctx)
	}
	// answers.go: score the answer text when the run judges answers
	s.r.judge(st, rec, wreq)
	if s.r.KernelClock && rec.Measured() { // warmup absorbs the kernel turning timestamps on
		s.clock.total.Add(int64(len(rec.Events)))
		s.clock.read.Add(int64(st.readStamps))
	}
	if s.r.KernelSends && rec.Measured() && rec.Sent != 0 {
		s.clock.sends.Add(1)
		if !st.kernelSent {
			s.clock.writeSends.Add(1)
		}
	}
	if s.r.Finished != nil {
		s.r.Finished(rec)
	}
	a.end(rec, st)
	ok := rec.OK()
	s.out <- rec
	return ok
}

// classify stores a request failure in its record.
func classify(rec *record.Record, err error, ctx context.Context) {
	var ce *client.Error
	switch {
	case errors.As(err, &ce):
		rec.ErrorClass, rec.Error = ce.Class, ce.Msg
		if ce.Status != 0 {
			rec.Status = ce.Status
		}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		rec.ErrorClass, rec.Error = record.ErrTimeout, err.Error()
	case ctx.Err() != nil:
		rec.ErrorClass, rec.Error = record.ErrCancelled, err.Error()
	case rec.Headers == 0:
		rec.ErrorClass, rec.Error = record.ErrConnect, err.Error()
	default:
		rec.ErrorClass, rec.Error = record.ErrTruncated, err.Error()
	}
}

// recordID is the record ID of request index i.
func (r *Runner) recordID(i int) int {
	if r.ID == nil {
		return i
	}
	return r.ID(i)
}
