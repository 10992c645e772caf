package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"sync/atomic"
	"time"
)

// maxCaptureSize is the largest batch shape given a graph. Steps computing more tokens run
// eagerly, without a capture, as vLLM's do beyond its largest cudagraph capture size (512).
const maxCaptureSize = 512

// startupCost lays a real engine's one-off start-up costs and its slow drift over the
// roofline's steady-state step times:
//
//   - cold steps: the first coldSteps steps cost coldFactor × their roofline time, as a
//     fresh engine's do while JIT compilation, kernel autotuning and lazy allocation run;
//   - graph capture: the first step of each batch shape costs capture more, once, as CUDA
//     graph capture does. A shape is the step's token count (the batch size, for pure
//     decode) rounded up to a power of two, the capture buckets 1, 2, 4, …, 512;
//   - throttling: every step starting throttleAfter or more after the first step's start
//     costs throttleFactor × more, as a thermally or power-throttled GPU's do.
//
// It reads no clock: the engine passes each step's start on its own schedule, so tests run
// it step by step. The engine goroutine owns it; phases is what others may read.
type startupCost struct {
	coldSteps      int64
	coldFactor     float64
	capture        time.Duration
	throttleAfter  time.Duration // 0 = no throttling
	throttleFactor float64

	steps     int64
	captured  uint64 // bit i set: shape 2^i has been captured
	lazy      lazyCompile
	origin    time.Time // start of the first step: throttling counts from it
	throttled bool
	phases    phaseState
}

// stepPhase is what one step changed: it ended the cold phase, or it was the first
// throttled one.
type stepPhase struct{ coldEnd, throttleStart, compiled bool }

// newStartupCost is c's start-up model, or nil when every part of it is off (and always in
// fixed mode, which has no engine steps).
func newStartupCost(c *Config) *startupCost {
	steps, factor, capture := c.coldStart()
	if c.FixedMode() || (steps == 0 && capture == 0 && c.ThrottleAfter == 0 && c.LazyCompile == 0) {
		return nil
	}
	sc := &startupCost{coldSteps: int64(steps), coldFactor: factor, capture: capture,
		throttleAfter: c.ThrottleAfter, throttleFactor: c.ThrottleFactor, lazy: lazyCompile{cost: c.LazyCompile}}
	sc.phases.coldSteps = sc.coldSteps
	return sc
}

// next returns the duration of the next step, whose roofline time is base, which computes
// tokens tokens and starts at start on the engine's schedule.
func (sc *startupCost) next(base time.Duration, tokens int, start time.Time) (time.Duration, stepPhase) {
	var ph stepPhase
	if sc.steps == 0 {
		sc.origin = start
	}
	sc.steps++
	sc.phases.steps.Store(sc.steps)
	d := base
	if sc.steps <= sc.coldSteps {
		// the cold factor fades linearly, step by step, from ColdFactor on the first step to
		// nearly 1 on the last, as JIT and autotuning finish kernel after kernel: a warmup
		// that only checks for a plateau would otherwise stop inside a uniformly slow phase
		left := float64(sc.coldSteps-sc.steps+1) / float64(sc.coldSteps)
		d = scaleDuration(d, 1+(sc.coldFactor-1)*left)
		ph.coldEnd = sc.steps == sc.coldSteps
	}
	if sc.throttleAfter > 0 && start.Sub(sc.origin) >= sc.throttleAfter {
		d = scaleDuration(d, sc.throttleFactor)
		ph.throttleStart, sc.throttled = !sc.throttled, true
	}
	if bit, ok := captureBit(tokens); ok && sc.capture > 0 && sc.captured&bit == 0 {
		sc.captured |= bit
		sc.phases.captures.Add(1)
		d += sc.capture // a one-off cost of the host and driver: neither warmth nor throttling scales it
	}
	return d, ph
}

// captureBit is the bit of the capture bucket of a step of tokens tokens; false when the
// step is too large to have a graph.
func captureBit(tokens int) (uint64, bool) {
	if tokens < 1 || tokens > maxCaptureSize {
		return 0, false
	}
	return 1 << bits.Len(uint(tokens-1)), true // 2^⌈log2 tokens⌉
}

func scaleDuration(d time.Duration, f float64) time.Duration {
	return time.Duration(math.Round(float64(d) * f))
}

// phaseState is the start-up phases as others may read them while the engine runs.
type phaseState struct {
	coldSteps     int64
	steps         atomic.Int64
	captures      atomic.Int64
	coldEnd       atomic.Int64 // Unix ns; 0 while cold
	compiles      compileLog
	throttleStart atomic.Int64 // Unix ns; 0 before
}

// Phases is where the engine stands in its one-off start-up costs and its slow drift, the
// truth against which a benchmark's warmup and drift detection can be checked.
type Phases struct {
	ColdSteps     int       // steps configured to run cold (--cold-steps); 0 = no cold phase
	Steps         int64     // engine steps taken so far (counted only while a start-up cost or throttling is on)
	ColdEnd       time.Time // end of the last cold step on the engine's schedule; zero while cold or without a cold phase
	Captures      int       // batch shapes that have paid their one-off capture time
	ThrottleStart time.Time // start of the first throttled step; zero before, and without throttling
	Compiles      []Compile // steps that paid a lazy compilation (--lazy-compile), in order
}

// Phases reports the engine's start-up phases. In fixed mode, and with every start-up cost
// and throttling off, it is the zero value.
func (s *Server) Phases() Phases {
	sc := s.eng.cost
	if sc == nil {
		return Phases{}
	}
	p := &sc.phases
	return Phases{ColdSteps: int(p.coldSteps), Steps: p.steps.Load(), Captures: int(p.captures.Load()),
		ColdEnd: unixNs(p.coldEnd.Load()), ThrottleStart: unixNs(p.throttleStart.Load()), Compiles: p.compiles.all()}
}

func unixNs(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// versionPhases is Phases for /version, times as Unix ns (0 = not yet).
func (p Phases) versionPhases() map[string]int64 {
	ns := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.UnixNano()
	}
	last := time.Time{}
	if n := len(p.Compiles); n > 0 {
		last = p.Compiles[n-1].End
	}
	return map[string]int64{"cold_steps": int64(p.ColdSteps), "steps": p.Steps, "cold_end_ns": ns(p.ColdEnd),
		"captures": int64(p.Captures), "throttle_start_ns": ns(p.ThrottleStart),
		"compiles": int64(len(p.Compiles)), "last_compile_end_ns": ns(last)}
}

// markPhase records a phase change: in the state others read and as a truth log line
//
//	{"kind":"cold_end","written_ns":1712345678901234567,"steps":200}
//
// where written_ns is the instant on the engine's schedule (the last cold step's end, the
// first throttled step's start) and steps the engine steps taken by then.
func (e *engine) markPhase(kind string, at time.Time) {
	sc := e.cost
	switch kind {
	case "cold_end":
		sc.phases.coldEnd.Store(at.UnixNano())
	case "throttle_start":
		sc.phases.throttleStart.Store(at.UnixNano())
	}
	if e.truth != nil {
		e.truth.writePhase(kind, at, sc.steps)
	}
}

// writePhase appends one engine phase line (see engine.markPhase).
func (t *truthLog) writePhase(kind string, at time.Time, steps int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.err != nil {
		return
	}
	b := append(t.line[:0], `{"kind":`...)
	b = appendJSONString(b, kind)
	b = append(b, `,"written_ns":`...)
	b = strconv.AppendInt(b, at.UnixNano(), 10)
	b = append(b, `,"steps":`...)
	b = strconv.AppendInt(b, steps, 10)
	b = append(b, "}\n"...)
	t.line = b
	if _, err := t.w.Write(b); err != nil {
		t.err = err
	}
}

// coldStart is the effective cold-start figures: the fields, with --cold-start filling
// those left at 0 from the preset profile.
func (c *Config) coldStart() (steps int, factor float64, capture time.Duration) {
	steps, factor, capture = c.ColdSteps, c.ColdFactor, c.GraphCapture
	if c.ColdStart {
		steps = orPreset(steps, presetColdSteps)
		factor = orPreset(factor, presetColdFactor)
		capture = orPreset(capture, presetGraphCapture)
	}
	return steps, factor, capture
}

func orPreset[T int | float64 | time.Duration](v, preset T) T {
	if v != 0 {
		return v
	}
	return preset
}

// validateStartup checks the cold-start and throttling fields: each factor needs its count
// or delay and the other way round, so that a half-set pair is not silently off.
func (c *Config) validateStartup() error {
	steps, factor, capture := c.coldStart()
	for _, chk := range []struct {
		name string
		v    float64
	}{{"--cold-factor", factor}, {"--throttle-factor", c.ThrottleFactor}} {
		if math.IsNaN(chk.v) || chk.v < 0 || chk.v > 100 || (chk.v > 0 && chk.v < 1) {
			return fmt.Errorf("%s is a slow-down, 0 (off) or in [1, 100], got %g", chk.name, chk.v)
		}
	}
	switch {
	case steps < 0:
		return fmt.Errorf("--cold-steps must be at least 0, got %d", steps)
	case capture < 0:
		return fmt.Errorf("--graph-capture must not be negative, got %s", capture)
	case c.LazyCompile < 0:
		return fmt.Errorf("--lazy-compile must not be negative, got %s", c.LazyCompile)
	case c.ThrottleAfter < 0:
		return fmt.Errorf("--throttle-after must not be negative, got %s", c.ThrottleAfter)
	case (steps > 0) != (factor > 0):
		return errors.New("--cold-steps and --cold-factor go together: set both, or neither")
	case (c.ThrottleAfter > 0) != (c.ThrottleFactor > 0):
		return errors.New("--throttle-after and --throttle-factor go together: set both, or neither")
	}
	return nil
}

// describeStartup adds the start-up figures that are on to Describe's conditions; a run
// with them all off describes itself as before.
func (c *Config) describeStartup(d map[string]string) {
	steps, factor, capture := c.coldStart()
	if steps > 0 {
		d["cold_steps"], d["cold_factor"] = strconv.Itoa(steps), ftoa(factor)
	}
	if capture > 0 {
		d["graph_capture"] = capture.String()
	}
	if c.LazyCompile > 0 {
		d["lazy_compile"] = c.LazyCompile.String()
	}
	if c.ThrottleAfter > 0 {
		d["throttle_after"], d["throttle_factor"] = c.ThrottleAfter.String(), ftoa(c.ThrottleFactor)
	}
}
