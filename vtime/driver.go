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
		rng: rand.New(rand.NewPCG(l.Seed, 0x1e4))}
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
	in := d.l.InputTokens
	if j := d.l.InputJitter; j > 0 {
		in = max(1, int(float64(in)*(1-j+2*j*d.rng.Float64())))
	}
	r := &record.Record{ID: i, Phase: phase, Scheduled: at, Dispatched: at, Sent: at, Headers: at,
		InputTokens: in, MaxTokens: d.l.OutputTokens, FixedOutput: true, Status: 200,
		PromptTokens: in, PromptTokensSource: record.SourceServer,
		OutputTokensSource: record.SourceServer}
	if phase == record.PhaseWarmup && d.l.WarmupAuto {
		d.judge.Sent(i, at)
	}
	if phase == record.PhaseMeasure && d.measuredSent == 0 {
		d.firstMeasured = at
	}
	if phase == record.PhaseMeasure {
		d.measuredSent++
	}
	d.live[i] = r
	d.v.Submit(i, in, d.l.OutputTokens)
	return true
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
		if d.v.Idle() {
			if d.arr == nil || d.arr.next == math.MaxInt64 {
				return nil // closed loop: nothing in flight means every user is done
			}
			d.v.AdvanceTo(time.Duration(d.arr.next - t0Offset))
			continue
		}
		for _, e := range d.v.Step() {
			d.emit(e, d.now())
		}
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
