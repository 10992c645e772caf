package metrics

import (
	"fmt"
	"time"
)

// Options configures an Accumulator. The zero value means: DefaultPercentiles, no SLOs.
type Options struct {
	// Percentiles to report, in percent (0 < p < 100 is typical; 0 and 100 are min and max).
	// Empty means DefaultPercentiles.
	Percentiles []float64
	// SLO holds the goodput thresholds; a zero field is unset.
	SLO SLO
	// Window, when > 0, is the length of a steady-state window (a --duration run less its
	// --warmup-duration and --cooldown-duration). Only requests sent inside it are measured
	// (the load generator marks the others warmup or cooldown), and, as docs/design/METRICS.md says,
	// "the window's length is the divisor" of every rate, rather than first sent → last done.
	Window time.Duration
	// MaxConcurrency is the open-loop cap the run had (0: none). It lets the lateness warning
	// name the cap as the cause when the cap was full.
	MaxConcurrency int
}

// SLO holds per-request service-level objectives for goodput. A zero threshold is unset.
// A request meets an objective when its figure is ≤ the threshold (inclusive, docs/design/METRICS.md).
type SLO struct {
	// TTFT: time to first content event from sent. A completed request with no content event
	// has no TTFT and does not meet a TTFT objective.
	TTFT time.Duration
	// TPOT: (E2E − TTFT)/(output_tokens − 1). A request with ≤ 1 output token has no TPOT and
	// meets the objective vacuously (vLLM counts its TPOT as 0, with the same effect).
	TPOT time.Duration
	// ITL: met when every ITL (chunk) gap of the request is ≤ the threshold, i.e. its largest
	// gap. We chose the maximum rather than a per-request percentile because an SLO on
	// inter-token latency is a promise about every stall a user sees. A request with fewer than
	// two content events has no gap and meets it vacuously.
	ITL time.Duration
	// E2E: last content event − sent. A request with no content event does not meet it.
	E2E time.Duration
	// TTFO: time to first output (answer) token, first answer event − sent (reasoning.go). A
	// request whose output ended while still reasoning has none and does not meet it.
	TTFO time.Duration
	// Correct: the request's answer was judged right (record.Record.Right: correct against
	// the answer key, valid against the response format). An answer never judged misses it.
	Correct bool
}

// Any reports whether at least one objective is set.
func (s SLO) Any() bool {
	return s.TTFT > 0 || s.TPOT > 0 || s.ITL > 0 || s.E2E > 0 || s.TTFO > 0 || s.Correct
}

// String lists the set objectives, e.g. "TTFT ≤ 500ms, TPOT ≤ 50ms".
func (s SLO) String() string {
	var out string
	add := func(name string, d time.Duration) {
		if d <= 0 {
			return
		}
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%s ≤ %v", name, d)
	}
	add("TTFT", s.TTFT)
	add("TPOT", s.TPOT)
	add("ITL", s.ITL)
	add("E2E", s.E2E)
	add("TTFO", s.TTFO)
	if s.Correct {
		out += map[bool]string{true: ", ", false: ""}[out != ""] + "a right answer"
	}
	return out
}

// Validate checks the options.
func (o Options) Validate() error {
	for _, p := range o.Percentiles {
		if p < 0 || p > 100 {
			return fmt.Errorf("percentile %v out of range [0, 100]", p)
		}
	}
	if o.SLO.TTFT < 0 || o.SLO.TPOT < 0 || o.SLO.ITL < 0 || o.SLO.E2E < 0 || o.SLO.TTFO < 0 {
		return fmt.Errorf("negative SLO threshold")
	}
	return nil
}

func (o Options) percentiles() []float64 {
	if len(o.Percentiles) == 0 {
		return DefaultPercentiles
	}
	return o.Percentiles
}
