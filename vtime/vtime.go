// Package vtime runs load against the simulator's engine model in virtual time and writes
// the records a live run would: a closed loop of N users or an open loop of Poisson
// arrivals, with warmup (a fixed count or --warmup auto's judge), and no sockets, goroutines
// or sleeping, so a run of thousands of requests takes milliseconds. It exists to measure
// servebench's statistical claims (is the steady-state check's false-alarm rate what
// docs/metrics.md says? does --warmup auto stop when the server is warm?) over hundreds of
// runs that are steady, or change, by construction (matrix.go).
//
// The records are what servebench run writes against the simulator with no client delays:
// scheduled = dispatched = sent = headers (the request arrives at the engine when it is
// sent), one content event per token at the end of the engine step that produced it, done
// at the last event, token counts from the server. Times are ns since t0, and t0 is 1 ms
// before the first send (0 is not a valid event time in a record).
package vtime

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"servebench/record"
	"servebench/sim"
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
	// WarmupWindows is how many windows the warmup judge closed (WarmupAuto).
	WarmupWindows int
	// Steps is the number of engine steps the run took.
	Steps int64
}

// t0Offset keeps every record time above 0.
const t0Offset = int64(time.Millisecond)

// Run drives c's engine model with l in virtual time.
func Run(c sim.Config, l Load) (*Result, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	v, err := sim.NewVirtual(c)
	if err != nil {
		return nil, err
	}
	d := newDriver(v, l)
	if err := d.run(); err != nil {
		return nil, err
	}
	res := &Result{Header: header(c, l), Records: d.done, End: d.end(), FirstMeasuredSent: d.firstMeasured,
		WarmupWindows: d.judge.Windows(),
		Steps:         v.Steps()}
	if t := v.ColdEnd(); t > 0 {
		res.ColdEnd = int64(t) + t0Offset
	}
	if t := v.ThrottleStart(); t > 0 {
		res.ThrottleStart = int64(t) + t0Offset
	}
	return res, nil
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

// poisson is the open loop's arrival schedule: exponential gaps at rate per second.
type poisson struct {
	rng  *rand.Rand
	rate float64
	next int64 // ns since t0 of the next arrival
}

func (p *poisson) pop() int64 {
	t := p.next
	p.next += int64(p.rng.ExpFloat64() / p.rate * 1e9)
	return t
}
