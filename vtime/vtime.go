// Package vtime runs servebench's load runner (package load, the loop `servebench run`
// runs) against the simulator's engine model in virtual time and keeps the records it
// writes: a closed loop of N users or an open loop of Poisson arrivals, with warmup (a fixed
// count or --warmup auto's judge), and no sockets and no waiting, so a run of thousands of
// requests takes a fraction of a second. It exists to measure servebench's statistical
// claims (is the steady-state check's false-alarm rate what docs/metrics.md says? does
// --warmup auto stop when the server is warm?) over hundreds of runs that are steady, or
// change, by construction (matrix.go).
//
// Virtual time is a testing/synctest bubble: the runner, its timers and its stamps read the
// time package as in a live run, and the bubble's clock moves only when every goroutine in
// it waits, to the next timer — the engine's step end, a user's stagger turn, an arrival.
// So the runner takes no clock of its own: what it reads in a live run is what it reads here.
// The engine is a client.Backend (server.go), so the records are what servebench run writes
// against the simulator with no client delays: dispatched = sent = headers (the request
// arrives at the engine when it is sent), one content event per token batch at the end of
// the engine step that produced it, done at the last event, token counts from the server.
// Times are ns since t0, and t0 is 1 ms before the first send (0 is not a valid event time
// in a record).
package vtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"servebench/client"
	"servebench/load"
	"servebench/load/pacer"
	"servebench/record"
	"servebench/sim"
	"servebench/workload"
)

// Load is one virtual run's load shape and workload.
type Load struct {
	Users int     // closed loop: users, each sending its next request when its last is done
	Rate  float64 // open loop: Poisson arrivals per second (Users must be 0)
	// Requests measured, after Warmup warmup requests (or, with WarmupAuto, after the judge
	// says warm, at least one request per user or per second of arrivals, at most WarmupMax).
	Requests   int
	Warmup     int
	WarmupAuto bool
	WarmupMax  int // 0: 2,000, the CLI's default
	// Input and output tokens of every request (output exactly, as with ignore_eos).
	InputTokens, OutputTokens int
	// InputJitter spreads each prompt's length uniformly over InputTokens·(1 ± InputJitter),
	// so that runs of one shape differ by their seed as live workloads do.
	InputJitter float64
	Seed        uint64 // the arrival schedule's and prompt lengths' seed
	// Mix, when set, draws each request's (input, output) lengths from these pairs by weight
	// (run --lengths mix:…), in place of InputTokens and OutputTokens.
	Mix []Pair
	// OutputSigma, when > 0, draws each output length from a lognormal of median
	// OutputTokens and this log-standard deviation (run --output-dist lognormal:…).
	OutputSigma float64
	// Noise is what a live run has beyond the engine model (see Noise).
	Noise Noise
}

// Pair is one length pair of a Mix and its weight.
type Pair struct {
	In, Out int
	Weight  float64
}

// Noise is the randomness a live run over HTTP has that the engine model does not: the
// validation matrix holds the steady check to its rates with it on, as real runs have it.
type Noise struct {
	// StepJitter lengthens every engine step by a uniform share in [0, StepJitter): a GPU's
	// steps are not all alike.
	StepJitter float64
	// StallProb is the chance that an engine step is followed by a stall of Stall, which
	// every stream in flight shares (a prefill burst, a garbage collection, a noisy
	// neighbour): the tail events that make ITL p99 bimodal from run to run.
	StallProb float64
	Stall     time.Duration
	// LateProb is the chance that the client dispatches a request late, by an exponential
	// delay of mean Late past its scheduled time (a busy client's goroutine scheduling).
	LateProb float64
	Late     time.Duration
}

// Validate checks the load shape.
func (l *Load) Validate() error {
	switch {
	case (l.Users > 0) == (l.Rate > 0):
		return errors.New("vtime: give either Users (closed loop) or Rate (open loop)")
	case l.Requests < 1 || l.Warmup < 0 || l.InputTokens < 1 || l.OutputTokens < 1:
		return errors.New("vtime: Requests, InputTokens and OutputTokens must be at least 1, Warmup at least 0")
	case math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0) || !(l.InputJitter >= 0 && l.InputJitter < 1):
		return errors.New("vtime: Rate must be a number and InputJitter in [0, 1)")
	case l.OutputSigma < 0 || l.Noise.StepJitter < 0 || l.Noise.StallProb < 0 || l.Noise.StallProb > 1 || l.Noise.LateProb < 0 || l.Noise.LateProb > 1:
		return errors.New("vtime: OutputSigma and the noise's figures must not be negative, probabilities at most 1")
	}
	for _, p := range l.Mix {
		if p.In < 1 || p.Out < 1 || !(p.Weight > 0) {
			return errors.New("vtime: a Mix pair needs lengths of at least 1 and a positive weight")
		}
	}
	return nil
}

// Result is one virtual run.
type Result struct {
	Header  *record.Header
	Records []record.Record // in completion order, as a live run writes them
	End     record.RunEnd
	// ColdEnd and ThrottleStart are the engine's phase changes on the records' clock (ns
	// since t0; 0 when they did not happen), the truth to check warmup and drift against.
	ColdEnd, ThrottleStart int64
	// FirstMeasuredSent is the first measured request's send time (ns since t0).
	FirstMeasuredSent int64
	// WarmupStopSent, with WarmupAuto, is the send time of the first request after the judge
	// stopped warming: a closed loop's warmup tail (load/warmup.go) when it has one, else the
	// first measured request.
	WarmupStopSent int64
	// WarmupWindows is how many windows the warmup judge closed (WarmupAuto).
	WarmupWindows int
	// Steps is the number of engine steps the run took.
	Steps int64
}

// t0Offset keeps every record time above 0.
const t0Offset = int64(time.Millisecond)

// Run drives c's engine model with l in virtual time, through load.Runner, in a synctest
// bubble of t's (so only a test can run it; several may run at once).
func Run(t *testing.T, c sim.Config, l Load) (*Result, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	v, err := sim.NewVirtual(c)
	if err != nil {
		return nil, err
	}
	var res *Result
	synctest.Test(t, func(*testing.T) { res, err = run(v, c, l) })
	if err != nil {
		return nil, err
	}
	return res, nil
}

// run is one run inside its bubble: the engine's goroutine serves the runner's requests
// until the runner is done.
func run(v *sim.Virtual, c sim.Config, l Load) (*Result, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := newServer(v, l)
	go srv.serve(ctx)
	defer func() { cancel(); <-srv.exited }()
	res := &Result{Header: header(c, l)}
	var out load.Outcome
	r := &load.Runner{Backend: srv, VirtualClock: true, Template: client.Request{FixedOutput: true}, Workload: workloadOf(l),
		Sink:  func(rec *record.Record) error { res.Records = append(res.Records, *rec); return nil },
		OnEnd: func(o load.Outcome) { out = o }}
	if err := r.Run(ctx, ctx, srv.base.Add(-time.Duration(t0Offset)), config(l)); err != nil {
		return nil, err
	}
	// records that ended in one instant reach the sink in the order their goroutines ran:
	// sorted, a run is the same however they were scheduled
	slices.SortStableFunc(res.Records, func(a, b record.Record) int {
		return cmp.Or(cmp.Compare(a.Done, b.Done), cmp.Compare(a.ID, b.ID))
	})
	res.End = record.RunEnd{Concurrency: l.Users, Rate: l.Rate, Stop: out.Stop, Unsent: out.Unsent,
		WarmupRequests: out.WarmupRequests, WarmupStop: out.WarmupStop}
	res.WarmupWindows, res.Steps = out.WarmupWindows, v.Steps()
	res.FirstMeasuredSent = firstMeasuredSent(res.Records)
	res.WarmupStopSent = res.FirstMeasuredSent
	if tail := out.WarmupRequests - l.Users; l.WarmupAuto && l.Users > 1 && out.WarmupStop != "not reached" && tail >= 0 {
		res.WarmupStopSent = sentOf(res.Records, tail) // the tail is one request per user
	}
	if t := v.ColdEnd(); t > 0 {
		res.ColdEnd = int64(t) + t0Offset
	}
	if t := v.ThrottleStart(); t > 0 {
		res.ThrottleStart = int64(t) + t0Offset
	}
	return res, nil
}

// config is l's load shape as `servebench run` sets it: an open loop's schedule starts at
// t0Offset, as a closed loop's first requests do.
func config(l Load) load.Config {
	cfg := load.Config{Concurrency: l.Users, Requests: l.Requests, Warmup: l.Warmup,
		Offset: time.Duration(t0Offset), WarmupAuto: l.WarmupAuto, WarmupMin: minWarm(l), WarmupMax: maxWarm(l)}
	if l.Rate > 0 {
		cfg.Pacer = poisson(l.Rate, l.Seed)
	}
	return cfg
}

// poisson is the open loop's arrival schedule: exponential gaps at rate per second, the
// first at 0. It is the CLI's --arrival poisson but for its draws (pacer.NewPoisson seeds
// another stream): the matrix's seeds keep the realised arrivals its rates were measured on.
func poisson(rate float64, seed uint64) pacer.Func {
	rng := rand.New(rand.NewPCG(seed, 0xa77))
	offs := []time.Duration{0}
	return func(n int) (time.Duration, bool) {
		for len(offs) <= n {
			offs = append(offs, offs[len(offs)-1]+time.Duration(rng.ExpFloat64()/rate*1e9))
		}
		return offs[n], true
	}
}

// minWarm is --warmup auto's floor, one request per slot (runspec.DefaultWarmup).
func minWarm(l Load) int {
	if l.Users > 0 {
		return l.Users
	}
	return max(1, int(l.Rate))
}

func maxWarm(l Load) int {
	if l.WarmupMax == 0 {
		return 2000
	}
	return l.WarmupMax
}

// workloadOf is one workload request per request the run can send, its lengths drawn in
// request order: a fixed warmup and the measured ones, or with WarmupAuto the most it may
// warm, the warmup's tail of one request per user (load/warmup.go) and the measured ones.
func workloadOf(l Load) []workload.Request {
	n := l.Warmup + l.Requests
	if l.WarmupAuto {
		n = maxWarm(l) + l.Users + l.Requests
	}
	w := make([]workload.Request, n)
	for i, p := range lengths(l, n) {
		w[i] = workload.Request{ID: i, InputTokens: p[0], OutputTokens: p[1]}
	}
	return w
}

// sentOf is request id's send time.
func sentOf(recs []record.Record, id int) int64 {
	for i := range recs {
		if recs[i].ID == id {
			return recs[i].Sent
		}
	}
	return 0
}

// firstMeasuredSent is the send time of the first measured request (the lowest ID).
func firstMeasuredSent(recs []record.Record) int64 {
	id, t := math.MaxInt, int64(0)
	for i := range recs {
		if r := &recs[i]; r.Phase == record.PhaseMeasure && r.ID < id {
			id, t = r.ID, r.Sent
		}
	}
	return t
}

// Write writes the run as a records file: header, records, run-end line.
func (r *Result) Write(w io.Writer) error {
	rw := record.NewWriter(w)
	if err := rw.WriteHeader(r.Header); err != nil {
		return fmt.Errorf("write header: %w", err)
	}
	for i := range r.Records {
		if err := rw.Write(&r.Records[i]); err != nil {
			return fmt.Errorf("write record: %w", err)
		}
	}
	if err := rw.WriteRunEnd(&r.End); err != nil {
		return fmt.Errorf("write run end: %w", err)
	}
	return rw.Flush()
}

// header is what servebench run would write for this run, marked as simulated in virtual
// time.
func header(c sim.Config, l Load) *record.Header {
	cfg := map[string]any{"requests": float64(l.Requests), "warmup": float64(l.Warmup),
		"input_tokens": float64(l.InputTokens), "output_tokens": float64(l.OutputTokens), "virtual_time": true}
	if l.Users > 0 {
		cfg["concurrency"] = float64(l.Users)
	} else {
		cfg["rate"] = l.Rate
	}
	if l.WarmupAuto {
		cfg["warmup_auto"] = true
	}
	return &record.Header{Schema: record.SchemaVersion, Command: []string{"vtime"}, Start: time.Unix(0, 0).UTC(),
		Target:   record.Target{URL: "virtual:", API: "openai-completions", Model: c.ModelPreset, Simulated: true},
		Workload: record.Workload{Source: "synthetic", Count: l.Warmup + l.Requests, Seed: int64(l.Seed)},
		Config:   cfg}
}
