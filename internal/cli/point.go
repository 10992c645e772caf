package cli

import (
	"context"
	"fmt"
	"time"

	"servebench/client"
	"servebench/load"
	"servebench/metrics"
	"servebench/record"
)

// prepareLoad resolves the load shape before the workload is built: a trace decides how many
// requests there are (and maybe their lengths).
func (b *bench) prepareLoad() error {
	lc, as, err := b.cfg.loadConfig()
	if err != nil {
		return err
	}
	b.lc, b.arrivals = lc, as
	if as != nil && b.cfg.Requests == 0 && b.cfg.Duration == 0 {
		// recorded in the header as what was sent: the whole run's count, also for a shard
		b.cfg.Requests = max(len(as)-b.cfg.Warmup, 1)
	}
	return nil
}

// begin writes the header and fixes t0, the one run start of the records file: every point of
// a sweep is timed from it.
func (b *bench) begin() error {
	b.w = record.NewWriter(b.out)
	b.t0 = time.Now()
	b.hdr.Start = b.t0
	b.opts = headerOptions(b.hdr)
	b.prog = newProgress(b.io.stderr, b.cfg.Quiet)
	if err := b.w.WriteHeader(b.hdr); err != nil {
		return fmt.Errorf("write records: %w", err)
	}
	return nil
}

// runner is the load runner for the bench's target and workload.
func (b *bench) runner() (*load.Runner, error) {
	cfg := b.cfg
	be, err := b.backend() // backends.go
	if err != nil {
		return nil, err
	}
	samp, err := cfg.runSampling() // each run its own cache salt (--cache-salt per-run)
	if err != nil {
		return nil, err
	}
	promptSrc := record.SourceRequested
	if b.exact {
		promptSrc = record.SourceTokenizer
	}
	return &load.Runner{Backend: be, Workload: b.reqs, PromptSource: promptSrc, Sink: b.sink, ID: b.shard.id, Finished: b.finished, KernelClock: cfg.ArrivalClock == "kernel",
		Template: client.Request{Model: cfg.Model, FixedOutput: cfg.FixedOutput, Sampling: samp, ContinuousUsage: b.continuousUsage()}}, nil
}

// runPoint runs one load shape as run end.Run of the records file, with live progress and
// measurement-quality sampling, then writes the run's RunEnd line and returns its summary.
// point labels the progress line ("" for a plain run).
func (b *bench) runPoint(ctx context.Context, lc load.Config, end record.RunEnd, point string) (*metrics.Summary, error) {
	r, err := b.runner()
	if err != nil {
		return nil, err
	}
	lc.Run = end.Run
	// prewarm.go; the schedule then starts after the connections are open
	if prewarmed := b.prewarm(ctx, lc); end.Run > 0 || prewarmed {
		// a later run of the file: its schedule starts now, not at the file's t0 (the first
		// run's starts at t0 exactly, so a trace's offsets are the records' scheduled times)
		lc.Offset = time.Since(b.t0)
	}
	var out load.Outcome
	r.OnEnd = func(o load.Outcome) { out = o }
	b.acc = metrics.NewAccumulator(b.opts)
	b.acc.SetHeader(b.hdr)
	var q load.QualitySampler
	q.Start()
	b.prog.begin(point, lc.Requests, lc.Duration)
	err = r.Run(ctx, hardStop(ctx), b.t0, lc)
	b.prog.end()
	end.Stop, end.StopDetail, end.Unsent = out.Stop, out.StopDetail, out.Unsent
	end.Quality = q.Stop()
	end.Quality.InProcessServer = b.sim != nil
	end.Quality.Stamps, end.Quality.ReadStamps = out.Stamps, out.ReadStamps
	if end.StopDetail != "" {
		b.logf("%s", end.StopDetail)
	}
	if werr := b.w.WriteRunEnd(&end); err == nil && werr != nil {
		err = fmt.Errorf("write records: %w", werr)
	}
	if ferr := b.w.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write records: %w", ferr)
	}
	if ctx.Err() != nil {
		b.logf("interrupted: partial results")
	}
	b.hdr.Ends = append(b.hdr.Ends, end)
	return b.acc.Summary(), err
}

// sink is the single writer of records: to the file, into the accumulator and the progress
// counters. It runs on the runner's writer goroutine, never on a request's.
func (b *bench) sink(r *record.Record) error {
	r.Shard = b.shard.i
	if err := b.w.Write(r); err != nil {
		return err
	}
	b.acc.Add(r)
	b.prog.add(r)
	if time.Since(b.flushed) > time.Second {
		b.flushed = time.Now()
		return b.w.Flush()
	}
	return nil
}

// continuousUsage resolves --continuous-usage-stats: auto asks only the simulator, which is
// known to support it; other servers may reject an unknown stream option, so they are asked
// only when the user says so.
func (b *bench) continuousUsage() bool {
	switch b.cfg.ContinuousUsage {
	case "true":
		return true
	case "false":
		return false
	}
	return b.simulated
}
