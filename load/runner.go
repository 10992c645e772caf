// Package load drives a Backend with a fixed workload under a load shape — closed loop
// (N users) or open loop (an arrival schedule with an optional concurrency cap) — and emits
// one record per request.
package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"servebench/client"
	"servebench/load/pacer"
	"servebench/record"
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
	// Requests is the number of measured requests (0: until Duration).
	Requests int
	// Duration stops sending measured requests this long after the first was dispatched.
	Duration time.Duration
	// Grace is how long in-flight requests may finish after sending stops early (Ctrl-C)
	// before they are cancelled and recorded as cancelled.
	Grace time.Duration
	// RequestTimeout bounds one request (0: none); expiry is error class timeout.
	RequestTimeout time.Duration
	// Run is written into every record (repeat or sweep index).
	Run int
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
	out := make(chan *record.Record, 4096)
	sinkErr := make(chan error, 1)
	go func() { sinkErr <- r.drain(out, cancelReqs) }()

	st := &state{r: r, cfg: cfg, t0: t0, soft: soft, reqCtx: reqCtx, out: out}
	stopGrace := context.AfterFunc(soft, func() {
		// sending stopped early: in-flight requests get the grace period, then are cancelled
		t := time.AfterFunc(cfg.Grace, cancelReqs)
		context.AfterFunc(reqCtx, func() { t.Stop() })
	})
	defer stopGrace()
	if cfg.Pacer == nil {
		st.closedLoop()
	} else {
		st.openLoop()
	}
	st.inflight.Wait()
	close(out)
	return <-sinkErr
}

// drain hands records to the sink; after a sink error it cancels the run and discards.
func (r *Runner) drain(out <-chan *record.Record, cancel func()) error {
	var err error
	for rec := range out {
		if err != nil {
			continue
		}
		if err = r.Sink(rec); err != nil {
			cancel()
			err = fmt.Errorf("write records: %w", err)
		}
	}
	return err
}

// state is one run in progress.
type state struct {
	r      *Runner
	cfg    Config
	t0     time.Time
	soft   context.Context
	reqCtx context.Context
	out    chan<- *record.Record

	mu       sync.Mutex
	next     int   // next request index
	stopAt   int64 // ns since t0 after which no measured request is sent (0: not yet known)
	inflight sync.WaitGroup
}

// take returns the next request index, or false when a stop rule says sending is over.
// now is the ns offset at which the caller would dispatch it.
func (s *state) take(now int64) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.soft.Err() != nil || s.reqCtx.Err() != nil {
		return 0, false
	}
	i := s.next
	measured := i - s.cfg.Warmup
	if measured >= 0 {
		if s.cfg.Requests > 0 && measured >= s.cfg.Requests {
			return 0, false
		}
		if s.cfg.Duration > 0 {
			if s.stopAt == 0 {
				s.stopAt = now + int64(s.cfg.Duration)
			} else if now >= s.stopAt {
				return 0, false
			}
		}
	}
	s.next++
	return i, true
}

func (s *state) since() int64 { return int64(time.Since(s.t0)) }

// closedLoop runs Concurrency users; each sends its next request when its last one finished.
// A request's scheduled time is when its user became free.
func (s *state) closedLoop() {
	var users sync.WaitGroup
	for range s.cfg.Concurrency {
		users.Go(func() {
			for {
				now := s.since()
				i, ok := s.take(now)
				if !ok {
					return
				}
				s.inflight.Add(1)
				s.send(i, now)
			}
		})
	}
	users.Wait()
}

// openLoop dispatches request n at t0 + Pacer.Due(n), each in its own goroutine, waiting for a
// slot when MaxConcurrency is set. The schedule is absolute: a late dispatch does not shift
// later ones.
func (s *state) openLoop() {
	var slots chan struct{}
	if s.cfg.MaxConcurrency > 0 {
		slots = make(chan struct{}, s.cfg.MaxConcurrency)
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for n := 0; ; n++ {
		due, ok := s.cfg.Pacer.Due(n)
		if !ok || !s.sleepUntil(timer, due) {
			return
		}
		if _, ok := s.take(int64(due)); !ok {
			return
		}
		if slots != nil {
			select {
			case slots <- struct{}{}:
			case <-s.soft.Done():
				return
			}
		}
		s.inflight.Add(1)
		go func() {
			s.send(n, int64(due))
			if slots != nil {
				<-slots
			}
		}()
	}
}

// sleepUntil waits until offset due from t0; false when sending was stopped meanwhile.
func (s *state) sleepUntil(timer *time.Timer, due time.Duration) bool {
	d := time.Until(s.t0.Add(due))
	if d <= 0 {
		return s.soft.Err() == nil
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-s.soft.Done():
		return false
	}
}

// send performs request i, scheduled at offset sched, and hands its record to the writer.
func (s *state) send(i int, sched int64) {
	defer s.inflight.Done()
	wreq := &s.r.Workload[i%len(s.r.Workload)]
	phase := record.PhaseMeasure
	if i < s.cfg.Warmup {
		phase = record.PhaseWarmup
	}
	rec := &record.Record{
		ID: i, Run: s.cfg.Run, Phase: phase, Scheduled: sched,
		InputTokens: wreq.InputTokens, MaxTokens: wreq.OutputTokens, FixedOutput: s.r.Template.FixedOutput,
		Events: make([]record.Event, 0, wreq.OutputTokens+1),
	}
	req := s.r.Template
	req.Request = wreq
	ctx := s.reqCtx
	if s.cfg.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RequestTimeout)
		defer cancel()
	}
	st := &stamp{t0: s.t0, rec: rec}
	err := s.r.Backend.Do(ctx, &req, st)
	st.finish(s.r.PromptSource)
	if err != nil {
		classify(rec, err, ctx)
	}
	s.out <- rec
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
