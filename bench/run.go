package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"servebench/metrics"
	"servebench/record"
	"servebench/runspec"
)

// Result is a finished run's records file: its header and every run's summary.
type Result struct {
	Header *record.Header
	Runs   []metrics.RunSummary
	Output string // the records file
}

// Run is `servebench run`: open a session for the resolved spec s, run the load --repeat
// times (once by default) as runs 0..N−1 of one records file, each with its own warmup, and
// put the file in place. hard cancels in-flight requests (second Ctrl-C); ctx stops sending.
// The Result is returned whenever a records file was written, also with an *AllFailedError.
func Run(ctx, hard context.Context, s runspec.Spec, opt Options) (*Result, error) {
	b, err := Open(ctx, s, opt)
	if err != nil {
		return nil, err
	}
	if err := b.Begin(ctx); err != nil {
		b.Close()
		return nil, err
	}
	b.logf("sending: %s", Describe(&b.spec))
	err = b.repeats(ctx, hard)
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	res := &Result{Header: b.hdr, Runs: b.runs, Output: b.spec.Output}
	if err != nil {
		return res, err
	}
	return res, b.allFailed()
}

// repeats runs the load --repeat times (or until --repeat auto is satisfied).
func (b *Session) repeats(ctx, hard context.Context) error {
	if b.spec.RepeatAuto {
		return b.autoRepeat(ctx, hard)
	}
	n := max(1, b.spec.Repeat)
	if n == 1 {
		_, err := b.RunPoint(ctx, hard, b.lc, record.RunEnd{}, "")
		return err
	}
	for i := range n {
		label := fmt.Sprintf("repeat %d/%d", i+1, n)
		s, err := b.RunPoint(ctx, hard, b.lc, record.RunEnd{Run: i, Label: label}, label)
		if errors.Is(err, ErrNotBegun) {
			return nil // stopped between runs: the runs before stand
		}
		b.logf("%s: %s", label, RunLine(s))
		if err != nil || ctx.Err() != nil {
			return err
		}
	}
	return nil
}

// Describe is the load of a resolved spec in words.
func Describe(s *runspec.Spec) string {
	d := describe(s)
	if s.WarmupAuto {
		d = strings.TrimSuffix(d, fmt.Sprintf(" after %d warmup", s.Warmup)) + " after warming until steady (--warmup auto)"
	}
	return d
}

func describe(s *runspec.Spec) string {
	if s.Stages != "" {
		return describeStages(s) // stages.go
	}
	stop := fmt.Sprintf("%d requests", s.Requests)
	if s.Sessions() {
		stop = fmt.Sprintf("%d sessions of %d turns", s.Requests, s.Turns)
	}
	if s.Duration > 0 {
		stop = fmt.Sprintf("for %v", s.Duration)
	}
	if s.Ramp != "" || s.Trace != "" || s.TraceDataset() {
		what := "ramp " + s.Ramp + " (" + s.Arrival + " arrivals)"
		if s.Trace != "" {
			what = "trace " + s.Trace
		}
		if s.TraceDataset() {
			what = "open loop: the arrivals of " + s.Dataset
		}
		return fmt.Sprintf("%s, %s after %d warmup", what, stop, s.Warmup)
	}
	if s.Rate > 0 {
		capS := ""
		if s.MaxConcurrency > 0 {
			capS = fmt.Sprintf(", at most %d in flight", s.MaxConcurrency)
		}
		return fmt.Sprintf("%s arrivals at %s req/s%s, %s after %d warmup", s.Arrival, strconv.FormatFloat(s.Rate, 'f', -1, 64), capS, stop, s.Warmup)
	}
	return fmt.Sprintf("%d users (closed loop), %s after %d warmup", s.Concurrency, stop, s.Warmup)
}

// RunLine is one run's key figures in a line.
func RunLine(s *metrics.Summary) string {
	if s == nil {
		return "no summary"
	}
	out := fmt.Sprintf("%d completed, %d failed", s.Completed, s.Failed)
	if s.OutputThroughput != nil {
		out += fmt.Sprintf(", %.0f output tok/s", *s.OutputThroughput)
	}
	if s.TTFT.Valid() {
		out += fmt.Sprintf(", TTFT p50 %.1f ms", s.TTFT.Median/1e6)
	}
	if s.ITLChunk.Valid() {
		out += fmt.Sprintf(", ITL p50 %.2f ms", s.ITLChunk.Median/1e6)
	}
	return out
}

// GateError is an SLO gate (--fail-below) that was not met.
type GateError struct{ Msg string }

func (e *GateError) Error() string { return e.Msg }

// Gate applies --fail-below to every run of a file (the gate must hold for every run of a
// --repeat, not only the last one printed): a *GateError when the worst run's SLO attainment
// is below the target or undefined (no request could meet it), else a line saying it passed.
func Gate(failBelow string, runs []metrics.RunSummary) (string, error) {
	if failBelow == "" || len(runs) == 0 {
		return "", nil
	}
	target, err := metrics.ParseShare("--fail-below", failBelow)
	if err != nil {
		return "", runspec.Usage(err)
	}
	worst := runs[len(runs)-1].Summary
	for _, r := range runs {
		if r.Summary == nil {
			continue
		}
		if r.Summary.SLOAttainment == nil || (worst.SLOAttainment != nil && *r.Summary.SLOAttainment < *worst.SLOAttainment) {
			worst = r.Summary
		}
	}
	if worst.SLOAttainment == nil {
		return "", &GateError{fmt.Sprintf("SLO gate failed: no measured request, so SLO attainment is undefined (--fail-below %s)", failBelow)}
	}
	got := *worst.SLOAttainment
	if got < target {
		return "", &GateError{fmt.Sprintf("SLO gate failed: attainment %.2f%% (%d of %d met %s) is below --fail-below %.2f%%",
			100*got, worst.GoodRequests, worst.Measured, worst.SLO, 100*target)}
	}
	return fmt.Sprintf("SLO gate passed: attainment %.2f%% ≥ %.2f%%", 100*got, 100*target), nil
}
