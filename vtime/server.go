package vtime

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing/synctest"
	"time"

	"servebench/client"
	"servebench/sim"
)

// server is the simulator's engine model as a client.Backend, inside a synctest bubble: the
// one goroutine that steps the engine (serve) sleeps to each step's end on the bubble's
// clock, and a request's Do reports to its Observer what the client would read over HTTP
// with no delays: dispatched = sent = headers when it reaches the engine, one content event
// per engine step that produced tokens for it, at the step's end, and the server's usage.
// The load runner stamps those moments with the clock it always reads (time.Now), which in
// the bubble is virtual time.
type server struct {
	v     *sim.Virtual
	noise Noise
	seed  uint64
	rng   *rand.Rand // the engine's noise draws (Noise.StepJitter, Noise.StallProb)
	base  time.Time  // the engine's instant 0 on the bubble's clock
	// ordered hands every event over one at a time (Load.WarmupAuto), not only ends
	ordered bool

	mu    sync.Mutex
	queue []*call // sent, not yet taken by the engine
	wake  chan struct{}

	live   map[int]*call // by engine id
	nextID int
	exited chan struct{}
}

// call is one request in flight: the engine hands it each step's emit.
type call struct {
	key     int // the record ID, which orders arrivals of one instant
	in, out int
	ev      chan sim.Emit
}

var _ client.Backend = (*server)(nil)

func newServer(v *sim.Virtual, l Load) *server {
	return &server{v: v, noise: l.Noise, seed: l.Seed, rng: rand.New(rand.NewPCG(l.Seed, 0x5017)), base: time.Now(), ordered: l.WarmupAuto,
		wake: make(chan struct{}, 1), live: make(map[int]*call), exited: make(chan struct{})}
}

// Do implements client.Backend: the request reaches the engine now (or late, by
// Noise.LateProb, as a busy client's goroutine dispatches it) and streams its tokens.
func (s *server) Do(ctx context.Context, req *client.Request, obs client.Observer) error {
	key := recordID(req.RequestID)
	if n := s.noise; n.LateProb > 0 {
		// drawn per request, so a draw does not depend on the order of a simultaneous send
		rng := rand.New(rand.NewPCG(s.seed^0x1a7e, uint64(key)))
		if rng.Float64() < n.LateProb {
			time.Sleep(time.Duration(rng.ExpFloat64() * float64(n.Late)))
		}
	}
	obs.Dispatched()
	obs.WroteRequest()
	obs.Headers(200)
	c := &call{key: key, in: max(req.InputTokens, 1), out: max(req.OutputTokens, 1), ev: make(chan sim.Emit, 1)}
	s.mu.Lock()
	s.queue = append(s.queue, c)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	prev := 0
	for {
		select {
		case e := <-c.ev:
			obs.EventRead()
			obs.Choice()
			obs.Content(e.Generated - prev)
			prev = e.Generated
			if e.Done {
				obs.Usage(c.in, e.Generated)
				obs.Done()
				return nil
			}
		case <-ctx.Done():
			return ctx.Err() // the engine finishes it unread, as a server whose client hung up
		}
	}
}

// recordID is the record ID in an X-Request-Id ("<run>-<id>", load.RequestID).
func recordID(rid string) int {
	_, id, _ := strings.Cut(rid, "-")
	n, _ := strconv.Atoi(id)
	return n
}

// serve steps the engine until ctx ends. Before each step it waits for every other goroutine
// of the bubble to block (synctest.Wait): the runner's reactions to the last step (a closed
// loop's users sending their next requests at its end) are in the queue before the next
// step begins, as they reach the HTTP engine between its steps. Arrivals of one instant go
// to the engine in record ID order, so a run is the same however its goroutines were
// scheduled.
func (s *server) serve(ctx context.Context) {
	defer close(s.exited)
	for {
		synctest.Wait()
		s.v.AdvanceTo(time.Since(s.base))
		s.admit()
		if s.v.Idle() {
			select {
			case <-s.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		start := s.v.Now()
		es := s.v.Step()
		time.Sleep(s.v.Now() - time.Since(s.base))
		// a request's end (its record, a closed loop's next request) and, under --warmup
		// auto, every event (the judge cuts its windows in arrival order) is read and acted
		// on before the next stream's: the runner sees them in the engine's order, not in the
		// order its goroutines happened to run. Other events touch only their own record.
		for _, e := range es {
			c := s.live[e.ID]
			if e.Done {
				delete(s.live, e.ID)
			}
			select {
			case c.ev <- e:
				if e.Done || s.ordered {
					synctest.Wait()
				}
			default: // its reader gave up (a cancelled request); one in flight has read the last
			}
		}
		s.stepNoise(start)
	}
}

// admit hands the queued requests to the engine.
func (s *server) admit() {
	s.mu.Lock()
	q := s.queue
	s.queue = nil
	s.mu.Unlock()
	slices.SortFunc(q, func(a, b *call) int { return cmp.Compare(a.key, b.key) })
	for _, c := range q {
		s.live[s.nextID] = c
		s.v.Submit(s.nextID, c.in, c.out)
		s.nextID++
	}
}

// stepNoise lengthens the step that began at start by Noise.StepJitter and, with chance
// Noise.StallProb, stalls the engine (every stream) for Noise.Stall after it. The step's
// events keep the step's own end: the delay is seen by the next step's events.
func (s *server) stepNoise(start time.Duration) {
	n := s.noise
	extra := time.Duration(0)
	if n.StepJitter > 0 {
		extra += time.Duration(float64(s.v.Now()-start) * n.StepJitter * s.rng.Float64())
	}
	if n.StallProb > 0 && s.rng.Float64() < n.StallProb {
		extra += n.Stall
	}
	if extra > 0 {
		s.v.AdvanceTo(s.v.Now() + extra)
		time.Sleep(extra)
	}
}

// lengths draws the run's requests' (input, output) tokens in request order: from Mix by
// weight, or InputTokens with InputJitter and OutputTokens, lognormal with OutputSigma.
func lengths(l Load, n int) [][2]int {
	rng := rand.New(rand.NewPCG(l.Seed, 0x1e4))
	out := make([][2]int, n)
	tot := 0.0
	for _, p := range l.Mix {
		tot += p.Weight
	}
	for i := range out {
		out[i] = draw(l, rng, tot)
	}
	return out
}

func draw(l Load, rng *rand.Rand, tot float64) [2]int {
	if len(l.Mix) > 0 {
		u := rng.Float64() * tot
		for _, p := range l.Mix {
			if u -= p.Weight; u < 0 {
				return [2]int{p.In, p.Out}
			}
		}
		p := l.Mix[len(l.Mix)-1]
		return [2]int{p.In, p.Out}
	}
	in, out := l.InputTokens, l.OutputTokens
	if j := l.InputJitter; j > 0 {
		in = max(1, int(float64(in)*(1-j+2*j*rng.Float64())))
	}
	if sg := l.OutputSigma; sg > 0 {
		out = max(1, int(math.Round(float64(out)*math.Exp(sg*rng.NormFloat64()))))
	}
	return [2]int{in, out}
}
