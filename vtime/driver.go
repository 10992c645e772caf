package vtime

import (
	"math"
	"math/rand/v2"
	"time"

	"servebench/record"
	"servebench/sim"
	"servebench/stat"
)

// driver is one virtual run in progress.
type driver struct {
	v     *sim.Virtual
	l     Load
	judge stat.WarmupJudge
	arr   *poisson
	rng   *rand.Rand // prompt lengths
	noise *rand.Rand // Load.Noise's draws
	// pending are requests dispatched late (Noise.LateProb), not yet at the engine
	pending []pendingSend

	next          int    // next request index
	warmEnd       int    // first measured index; math.MaxInt while warming (auto)
	warmStop      string // why auto warming stopped
	live          map[int]*record.Record
	done          []record.Record
	firstMeasured int64
	measuredSent  int
	maxWarm       int
}

func newDriver(v *sim.Virtual, l Load) *driver {
	d := &driver{v: v, l: l, live: make(map[int]*record.Record), warmEnd: l.Warmup, maxWarm: l.WarmupMax,
		rng: rand.New(rand.NewPCG(l.Seed, 0x1e4)), noise: rand.New(rand.NewPCG(l.Seed, 0x5017))}
	if d.maxWarm == 0 {
		d.maxWarm = 2000
	}
	d.judge.Min = d.minWarm()
	if l.WarmupAuto {
		d.warmEnd = math.MaxInt
	}
	if l.Rate > 0 {
		d.arr = &poisson{rng: rand.New(rand.NewPCG(l.Seed, 0xa77)), rate: l.Rate, next: t0Offset}
	}
	return d
}

// now is the virtual clock on the records' scale.
func (d *driver) now() int64 { return int64(d.v.Now()) + t0Offset }

// minWarm is --warmup auto's floor, one request per slot (runspec.DefaultWarmup).
func (d *driver) minWarm() int {
	if d.l.Users > 0 {
		return d.l.Users
	}
	return max(1, int(d.l.Rate))
}

// take returns the next request's index and phase; false when every request was sent.
func (d *driver) take() (int, string, bool) {
	i := d.next
	if d.l.WarmupAuto && d.warmEnd == math.MaxInt && i >= d.minWarm() {
		switch {
		case d.judge.Settled():
			d.warmEnd, d.warmStop = i, "converged"
		case i >= d.maxWarm:
			d.warmEnd, d.warmStop = i, "max requests"
		}
	}
	phase := record.PhaseWarmup
	if i >= d.warmEnd {
		if i-d.warmEnd >= d.l.Requests {
			return 0, "", false
		}
		phase = record.PhaseMeasure
	}
	d.next++
	return i, phase, true
}

// send submits the next request at the current instant; false when none is left.
func (d *driver) send(at int64) bool {
	i, phase, ok := d.take()
	if !ok {
		return false
	}
	in, out := d.lengths()
	sent := at
	if n := d.l.Noise; n.LateProb > 0 && d.noise.Float64() < n.LateProb {
		sent += int64(d.noise.ExpFloat64() * float64(n.Late))
	}
	r := &record.Record{ID: i, Phase: phase, Scheduled: at, Dispatched: sent, Sent: sent, Headers: sent,
		InputTokens: in, MaxTokens: out, FixedOutput: true, Status: 200,
		PromptTokens: in, PromptTokensSource: record.SourceServer,
		OutputTokensSource: record.SourceServer}
	if phase == record.PhaseWarmup && d.l.WarmupAuto {
		d.judge.Sent(i, sent)
	}
	if phase == record.PhaseMeasure && d.measuredSent == 0 {
		d.firstMeasured = sent
	}
	if phase == record.PhaseMeasure {
		d.measuredSent++
	}
	d.live[i] = r
	if sent > d.now() {
		d.pending = append(d.pending, pendingSend{at: sent, id: i, in: in, out: out})
		return true
	}
	d.v.Submit(i, in, out)
	return true
}

// pendingSend is a request the client dispatches late: it reaches the engine at at.
type pendingSend struct {
	at          int64
	id, in, out int
}

// lengths draws one request's input and output tokens: from Mix by weight, or InputTokens
// with InputJitter and OutputTokens, lognormal with OutputSigma.
func (d *driver) lengths() (int, int) {
	if len(d.l.Mix) > 0 {
		tot := 0.0
		for _, p := range d.l.Mix {
			tot += p.Weight
		}
		u := d.rng.Float64() * tot
		for _, p := range d.l.Mix {
			if u -= p.Weight; u < 0 {
				return p.In, p.Out
			}
		}
		p := d.l.Mix[len(d.l.Mix)-1]
		return p.In, p.Out
	}
	in, out := d.l.InputTokens, d.l.OutputTokens
	if j := d.l.InputJitter; j > 0 {
		in = max(1, int(float64(in)*(1-j+2*j*d.rng.Float64())))
	}
	if s := d.l.OutputSigma; s > 0 {
		out = max(1, int(math.Round(float64(out)*math.Exp(s*d.rng.NormFloat64()))))
	}
	return in, out
}

// submitPending hands the late requests that are due by now to the engine.
func (d *driver) submitPending() {
	keep := d.pending[:0]
	for _, p := range d.pending {
		if p.at <= d.now() {
			d.v.Submit(p.id, p.in, p.out)
		} else {
			keep = append(keep, p)
		}
	}
	d.pending = keep
}

// nextPending is the earliest late request's time (MaxInt64: none).
func (d *driver) nextPending() int64 {
	t := int64(math.MaxInt64)
	for _, p := range d.pending {
		t = min(t, p.at)
	}
	return t
}

// run sends and steps until every request is done.
func (d *driver) run() error {
	if d.arr == nil {
		for range d.l.Users {
			if !d.send(d.now()) {
				break
			}
		}
	}
	for {
		d.arrive()
		d.submitPending()
		if d.v.Idle() {
			next := d.nextPending()
			if d.arr != nil {
				next = min(next, d.arr.next)
			}
			if next == math.MaxInt64 {
				return nil // nothing in flight, due or pending: every request is done
			}
			d.v.AdvanceTo(time.Duration(next - t0Offset))
			continue
		}
		start := d.now()
		es := d.v.Step()
		for _, e := range es {
			d.emit(e, d.now())
		}
		d.stepNoise(start)
	}
}

// stepNoise lengthens the step that began at start by Noise.StepJitter and, with chance
// Noise.StallProb, stalls the engine (every stream) for Noise.Stall after it. The step's
// events keep the step's own end: the delay is seen by the next step's events.
func (d *driver) stepNoise(start int64) {
	n := d.l.Noise
	extra := time.Duration(0)
	if n.StepJitter > 0 {
		extra += time.Duration(float64(d.now()-start) * n.StepJitter * d.noise.Float64())
	}
	if n.StallProb > 0 && d.noise.Float64() < n.StallProb {
		extra += n.Stall
	}
	if extra > 0 {
		d.v.AdvanceTo(d.v.Now() + extra)
	}
}

// arrive submits every open-loop arrival due by now. An arrival during a step reaches the
// engine at the step's end, as the HTTP engine drains its queue between steps, but its
// send time is its own.
func (d *driver) arrive() {
	if d.arr == nil {
		return
	}
	for d.arr.next != math.MaxInt64 && d.arr.next <= d.now() {
		if !d.send(d.arr.pop()) {
			d.arr.next = math.MaxInt64
		}
	}
}

// emit records one request's new tokens at t; a finished request completes, and in a
// closed loop its user sends the next one at once.
func (d *driver) emit(e sim.Emit, t int64) {
	r := d.live[e.ID]
	prev := r.OutputTokens
	if prev == 0 {
		r.FirstEvent = t
	}
	r.Events = append(r.Events, record.Event{T: t, N: int32(e.Generated - prev)})
	r.OutputTokens = e.Generated
	if r.Phase == record.PhaseWarmup && d.l.WarmupAuto {
		d.judge.Event(e.ID, t) // as the live runner streams them (load/warmup.go)
	}
	if !e.Done {
		return
	}
	r.Done = t
	delete(d.live, e.ID)
	d.done = append(d.done, *r)
	if r.Phase == record.PhaseWarmup && d.l.WarmupAuto {
		ev := make([]int64, len(r.Events))
		for k, x := range r.Events {
			ev[k] = x.T
		}
		d.judge.Done(r.ID, r.Sent, ev)
	}
	if d.arr == nil {
		d.send(t)
	}
}

// end is the run-end line.
func (d *driver) end() record.RunEnd {
	e := record.RunEnd{Concurrency: d.l.Users, Rate: d.l.Rate, Stop: "requests"}
	if d.l.WarmupAuto {
		e.WarmupRequests, e.WarmupStop = d.warmEnd, d.warmStop
		if d.warmEnd == math.MaxInt {
			e.WarmupRequests, e.WarmupStop = d.next, "not reached"
		}
	}
	return e
}
