package bench

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"servebench/client"
	"servebench/load"
	"servebench/metrics"
	"servebench/record"
	"servebench/validity"
)

// ErrNotBegun is RunPoint's error when the stop came before the run sent anything, while a
// later run's prompts were being built: there is no run, and the runs before it stand. It
// wraps context.Canceled, so where it is not expected it reads as an interruption.
var ErrNotBegun = fmt.Errorf("stopped before the run began: %w", context.Canceled)

// runner is the load runner for the session's target and run run's part of the workload.
func (b *Session) runner(ctx context.Context, run int) (*load.Runner, error) {
	s := &b.spec
	be, err := b.backend()
	if err != nil {
		return nil, err
	}
	pt, err := b.partFor(ctx, run)
	if err != nil {
		return nil, err
	}
	samp, err := s.RunSampling() // each run its own cache salt (--cache-salt per-run)
	if err != nil {
		return nil, err
	}
	promptSrc := record.SourceRequested
	if b.exact {
		promptSrc = record.SourceTokenizer
	}
	r := &load.Runner{Backend: be, Workload: pt.reqs, Warm: pt.warm, Repeats: pt.repeats, PromptSource: promptSrc, Sink: b.sink,
		Finished: b.opt.Finished, KernelClock: s.ArrivalClock == "kernel", KernelSends: s.SendClock == "kernel",
		Template: client.Request{Model: s.Model, FixedOutput: s.FixedOutput, Sampling: samp, ContinuousUsage: b.continuousUsage()}}
	r.TraceIDs = b.traceIDs
	r.Follows = pt.follows
	if s.SessionHeader != "" {
		r.SessionHeader = http.CanonicalHeaderKey(s.SessionHeader)
	}
	b.withTools(r)      // tools.go
	r.Judge = b.judge() // answers.go
	if b.shard.Split() {
		r.ID = b.shard.id // a shard's records are numbered, and pick their prompts, as the whole run's
	}
	return r, nil
}

// RunPoint runs one load shape as run end.Run of the records file, with live progress and
// measurement-quality sampling, then writes the run's run-end line and returns its summary.
// label names the run on the progress line ("" for a plain run). hard is the context whose
// cancellation (a second Ctrl-C) cancels in-flight requests; ctx's own stops sending.
func (b *Session) RunPoint(ctx, hard context.Context, lc load.Config, end record.RunEnd, label string) (*metrics.Summary, error) {
	r, err := b.runner(ctx, end.Run)
	if err != nil {
		if ctx.Err() != nil { // the stop came while the run's prompts were built (a tokenizer call)
			return nil, ErrNotBegun
		}
		return nil, err
	}
	lc.Run = end.Run
	if b.spec.FlushCache {
		how, err := client.ResetPrefixCache(ctx, b.target)
		if err != nil {
			return nil, fmt.Errorf("--flush-cache: %s", b.spec.Redact(err.Error()))
		}
		b.logf("--flush-cache: the server's prefix cache was emptied (%s) before run %d", how, end.Run+1)
	}
	// the run's first server sample, before its first request (the first run's was taken in
	// Begin, before t0)
	b.tel.Prime(ctx)
	// the schedule starts after prewarmed connections are open
	if prewarmed := b.prewarm(ctx, lc); end.Run > 0 || prewarmed {
		// a later run of the file: its schedule starts now, not at the file's t0 (the first
		// run's starts at t0 exactly, so a trace's offsets are the records' scheduled times)
		lc.Offset = time.Since(b.t0)
	}
	var out load.Outcome
	r.OnEnd = func(o load.Outcome) { out = o }
	prev := b.acc
	b.acc = metrics.NewAccumulator(b.mopt)
	b.acc.SetHeader(b.hdr)
	rules, err := b.spec.ValidityRules() // validated with the spec: no error here
	if err != nil {
		return nil, err
	}
	b.check = &validity.Checker{Rules: rules}
	// a later run of the file judges the server's cache hits against the earlier runs too
	b.acc.After(prev)
	q := load.QualitySampler{T0: b.t0}
	q.Start()
	if p := b.opt.Progress; p != nil {
		if w, ok := p.(liveWatcher); ok {
			r.Live = &load.Live{}
			w.Watch(r.Live)
		}
		p.Begin(label, lc.Requests, lc.Duration)
	}
	b.tel.Start()
	err = r.Run(ctx, hard, b.t0, lc)
	if p := b.opt.Progress; p != nil {
		p.End()
	}
	end.Stop, end.StopDetail, end.Unsent = out.Stop, out.StopDetail, out.Unsent
	end.CancelledBy = out.CancelledBy
	if h := out.Held; h != nil {
		end.Held = &record.Held{Turns: h.Turns, Held: h.Held, Lost: h.Lost,
			TotalMS: float64(h.Total) / 1e6, MaxMS: float64(h.Longest) / 1e6}
		mean := time.Duration(0)
		if h.Held > 0 {
			mean = h.Total / time.Duration(h.Held)
		}
		b.logf("sessions: %d of %d later turns held past their arrival until the turn before had ended (by %s mean, %s at most); a held turn is scheduled when released, so lateness leaves holding out",
			h.Held, h.Turns, mean.Round(time.Microsecond), h.Longest.Round(time.Microsecond))
	}
	end.WarmupRequests, end.WarmupStop = out.WarmupRequests, out.WarmupStop
	if end.WarmupStop != "" {
		b.logf("--warmup auto: %d warmup requests, %s", end.WarmupRequests, end.WarmupStop)
	}
	end.Validity = b.check.Result()
	if v := end.Validity; v != nil {
		b.logf("validity (%s): %s", v.Rules, v.Verdict)
	}
	end.Quality = q.Stop()
	end.Quality.InProcessServer = b.sim != nil
	end.Quality.Stamps, end.Quality.ReadStamps = out.Stamps, out.ReadStamps
	end.Quality.Sends, end.Quality.WriteSends = out.Sends, out.WriteSends
	if end.StopDetail != "" {
		b.logf("%s", end.StopDetail)
	}
	if serr := b.writeSpans(hard, end.Run); serr != nil && err == nil { // spans.go
		err = serr
	}
	if terr := b.writeTelemetry(end.Run, hard.Err() == nil); terr != nil && err == nil {
		err = terr
	}
	if b.endHook != nil {
		end.RepeatAuto = b.endHook(b.acc.Summary())
	}
	if werr := b.w.WriteRunEnd(&end); werr != nil && err == nil {
		err = b.writeErr(werr)
	}
	if ferr := b.flush(); ferr != nil && err == nil {
		err = ferr
	}
	if ctx.Err() != nil {
		b.logf("interrupted: partial results")
	}
	b.hdr.Ends = append(b.hdr.Ends, end)
	sum := b.acc.Summary()
	b.runs = append(b.runs, metrics.RunSummary{Run: end.Run, Label: end.Label, Summary: sum})
	return sum, err
}

// sink is the single writer of records: to the file, into the accumulator and the progress.
// It runs on the runner's writer goroutine, never on a request's.
func (b *Session) sink(r *record.Record) error {
	r.Shard = b.shard.I
	if r.Error != "" {
		// the last gate before the file, the summary and the progress line: a server may echo
		// any credential it was sent (a --header value, the URL's password), and a backend
		// redacts only the API key it knows of
		r.Error = b.spec.Redact(r.Error)
	}
	if err := b.w.Write(r); err != nil {
		return b.writeErr(err)
	}
	b.pending++
	b.acc.Add(r)
	b.check.Add(r)
	b.addTrace(r) // spans.go
	if p := b.opt.Progress; p != nil {
		p.Add(r)
	}
	if time.Since(b.flushed) > time.Second {
		b.flushed = time.Now()
		return b.flush()
	}
	return nil
}

// continuousUsage resolves --continuous-usage-stats: auto asks only the simulator, which is
// known to support it; other servers may reject an unknown stream option, so they are asked
// only when the user says so.
func (b *Session) continuousUsage() bool {
	switch b.spec.ContinuousUsage {
	case "true":
		return true
	case "false":
		return false
	}
	return b.simulated
}

// prewarm opens the connections of a run before it starts, when --prewarm-connections asks:
// one per closed-loop user or per --max-concurrency slot, 64 for an uncapped open loop. The
// requests then find their connections ready, so connection set-up (recorded per request as
// Record.Connect when it happens) stays out of TTFT. It reports whether it ran.
func (b *Session) prewarm(ctx context.Context, lc load.Config) bool {
	if !b.spec.Prewarm {
		return false
	}
	n := max(lc.Concurrency, lc.MaxConcurrency)
	if n == 0 {
		n = 64
	}
	start := time.Now()
	opened := client.Prewarm(ctx, b.target, n)
	b.logf("prewarm: %d of %d connections opened in %v", opened, n, time.Since(start).Round(time.Millisecond))
	return true
}

// liveWatcher is a Progress that follows requests as they stream (load.Live), not only as
// they complete.
type liveWatcher interface{ Watch(*load.Live) }
