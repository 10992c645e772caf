// Package bench is the orchestrator of a benchmark run: spec → target → workload →
// conditions → load → records → summaries. The command line, sweep and selftest all drive
// runs through it; it returns typed errors (runspec.UsageError, *GateError, *AllFailedError)
// and leaves exit codes, help text and printing to its callers.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"servebench/client"
	"servebench/load"
	"servebench/load/pacer"
	"servebench/metrics"
	"servebench/output"
	"servebench/record"
	"servebench/runspec"
	"servebench/sim"
	"servebench/spans"
	"servebench/telemetry"
	"servebench/validity"
	"servebench/workload"
)

// Progress is told about a run while it happens (the live progress line). Add is called from
// the records writer goroutine, never from a request's.
type Progress interface {
	Begin(label string, total int, dur time.Duration)
	Add(r *record.Record)
	End()
}

// Options are how a session reports and what it records of its caller.
type Options struct {
	// Log receives one line per step ("built 200 prompts ..."); nil discards them.
	Log io.Writer
	// Slow receives a line when building the workload takes more than a few seconds, and every
	// so often after, even when Log is nil (-q): a long build is never silent. nil: Log.
	Slow io.Writer
	// Progress, when set, follows every run (nil: none).
	Progress Progress
	// Version is servebench's version, for the records header and the host conditions.
	Version string
	// Args is the command line (without the program name), redacted before it is recorded.
	Args []string
	// Like is the baseline of run --like (runspec.Like), nil for none.
	Like *runspec.Base
	// Finished, when set, sees every record as soon as its request returns, concurrently
	// (load.Runner.Finished: selftest's count of streams held open at once).
	Finished func(r *record.Record)
	// Sweep names the sweep mode of a file of several load points ("" for run).
	Sweep string
	// WarmPrompts, when set, is how many prompts (sessions) each run keeps for its warmup in
	// place of --warmup: a sweep's points warm with as many requests as they have users.
	WarmPrompts int
	// Observed are figures of the moment recorded beside the server's own (the time a server
	// that servebench started took to become ready).
	Observed []record.Condition
}

// DefaultOutput is the records file of a run given no -o: named for the time it started.
func DefaultOutput() string {
	return "servebench-" + time.Now().UTC().Format("20060102T150405Z") + ".jsonl"
}

// Session is one records file being made: its target, workload and header, and the runs
// (repeats or sweep points) written into it so far.
type Session struct {
	logMu  sync.Mutex   // Options.Log and Options.Slow are written from the slow-build notice's goroutine too
	spec   runspec.Spec // resolved
	opt    Options
	target client.Target
	sim    *sim.Server
	// simulated is true when the target is servebench's simulator, in-process or standalone
	simulated bool
	shard     shard
	hdr       *record.Header
	reqs      []workload.Request // every part built before the run, in order
	reqsSHA   string             // sha256 of reqs' prompts-file encoding (longctx.go)
	parts     []part             // the workload run by run (parts.go)
	plan      plan
	exact     bool
	nonce     uint64          // mixed into generated prompt text (nonce.go); 0: none
	ds        *dataset        // a dataset or shared-prefix workload's identity (dataset.go)
	tokName   string          // what measured the prompt lengths, for the header
	watch     *watchedBackend // says why when every request failed
	out       *output.File
	w         *record.Writer
	acc       *metrics.Accumulator
	check     *validity.Checker // the current run's validity rules (package validity)

	// media is the media every part's requests carry (media.go), and mediaFirst the requests
	// given media so far: the next part's first index
	media      *workload.MediaPlan
	mediaFirst int
	// endHook, when set, judges a run's summary before its run-end line is written
	// (--repeat auto records there why it stopped)
	endHook  func(*metrics.Summary) *record.RepeatAuto
	flushed  time.Time
	written  int // records flushed to the file
	pending  int // records handed to the writer
	lc       load.Config
	arrivals []pacer.Arrival
	t0       time.Time
	mopt     metrics.Options
	runs     []metrics.RunSummary
	tel      *telemetry.Scraper // nil: no server telemetry
	tools    *toolSet           // the offered tools (tools.go); nil: none
	traceIDs *spans.IDs         // the requests' trace ids (spans.go); nil: no trace context
	otlp     *spans.Receiver    // the server's spans (--otlp-listen); nil: none
	// runTraces are the trace ids of the current run's completed measured requests
	runTraces []string
}

// Open prepares a session for the resolved spec s: it refuses outputs that would overwrite an
// input (or an existing records file without --force), creates the records file, starts the
// built-in simulator when no URL was given, waits for the server, builds the workload and
// records the conditions. Nothing is sent to the server's generation endpoints yet.
func Open(ctx context.Context, s runspec.Spec, opt Options) (*Session, error) {
	b := &Session{spec: s, opt: opt}
	steps := []func(context.Context) error{b.openOutput, b.loadTools, b.startTarget, b.openSpans, b.prepareLoad, b.buildWorkload, b.recordConditions}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			b.Abort()
			return nil, err
		}
	}
	return b, nil
}

func (b *Session) logf(format string, a ...any) {
	if b.opt.Log != nil {
		// what a server said (a model id, an error) may carry a secret it was sent
		b.logMu.Lock()
		defer b.logMu.Unlock()
		fmt.Fprintln(b.opt.Log, b.spec.Redact(fmt.Sprintf(format, a...)))
	}
}

// Spec is the resolved spec the session runs (the trace may have set its request count).
func (b *Session) Spec() runspec.Spec { return b.spec }

// Header is the records file's header.
func (b *Session) Header() *record.Header { return b.hdr }

// Load is the load shape of the spec (a sweep or selftest point starts from it).
func (b *Session) Load() load.Config { return b.lc }

// T0 is the run start every timestamp of the file is relative to (zero before Begin).
func (b *Session) T0() time.Time { return b.t0 }

// Options are the metrics options of the file (its SLOs, window and cap).
func (b *Session) Options() metrics.Options { return b.mopt }

// Runs are the summaries of the runs so far, in order.
func (b *Session) Runs() []metrics.RunSummary { return b.runs }

// Output is the records file's path.
func (b *Session) Output() string { return b.spec.Output }

// openOutput creates the records file first, so an unwritable path fails before any request
// is sent. It never overwrites an input, nor an existing file without --force.
func (b *Session) openOutput(context.Context) error {
	s := &b.spec
	if s.Output == "" {
		s.Output = DefaultOutput()
	}
	_, dataset := s.DatasetOf()
	inputs := []string{s.Like, s.Prompts, s.Trace, s.Tokenizer, s.ConditionsFile, dataset}
	for _, o := range []struct{ flag, path string }{{"-o", s.Output}, {"--json", s.JSON}, {"--save-workload", s.SaveWorkload}} {
		if err := output.NotInput(o.flag, o.path, inputs...); err != nil {
			return runspec.Usage(err)
		}
	}
	if err := output.NotInput("--json", s.JSON, s.Output); err != nil {
		return runspec.Usage(err)
	}
	f, err := output.Create(s.Output, output.Options{Replace: s.Force})
	if errors.Is(err, output.ErrExists) {
		return runspec.Usagef("records file %s exists: choose another -o, or --force to replace it", s.Output)
	} else if err != nil {
		return fmt.Errorf("records file: %w", err)
	}
	b.out = f
	if s.JSON != "" {
		if err := checkWritable(s.JSON); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	return nil
}

// checkWritable checks that path can be created (or written), leaving no trace.
func checkWritable(path string) error {
	f, err := output.Create(path, output.Options{Replace: true})
	if err != nil {
		return err
	}
	f.Abort()
	return nil
}

// Begin writes the header and fixes t0, the one run start of the records file: every run of
// the file (repeat, sweep point) is timed from it. With --start-at, t0 is that instant: Begin
// waits for it (startat.go), and a cancelled ctx ends the wait and the session, file removed.
func (b *Session) Begin(ctx context.Context) error {
	b.w = record.NewWriter(b.out)
	secrets := b.spec.Secrets()
	b.w.Redact(runspec.Redacted, secrets...)
	// the summary and --json are printed from the header in memory: as clean as the file
	if clean, err := record.RedactedHeader(b.hdr, runspec.Redacted, secrets...); err != nil {
		return err
	} else if clean != b.hdr {
		*b.hdr = *clean
	}
	// the wait comes before the first telemetry sample, which must stay just before t0 (and
	// a GPU sampler would sample the idle wait)
	if err := b.waitStart(ctx); err != nil {
		return err
	}
	b.tel = b.newScraper()
	b.tel.Prime(context.Background()) // before t0, so the first sample precedes every request
	b.remoteGPUConditions()
	b.t0 = time.Now()
	b.hdr.Start = b.t0
	b.hdr.Sweep = b.opt.Sweep
	var err error
	if b.mopt, err = metrics.HeaderOptions(b.hdr); err != nil {
		return runspec.Usage(err)
	}
	if err := b.w.WriteHeader(b.hdr); err != nil {
		return b.writeErr(err)
	}
	return b.flush()
}

// flush writes the buffered records through to the file and counts them as kept.
func (b *Session) flush() error {
	if err := b.w.Flush(); err != nil {
		return b.writeErr(err)
	}
	if err := b.out.Flush(); err != nil {
		return b.writeErr(err)
	}
	b.written = b.pending
	return nil
}

// Close puts the records file in place (renamed over its target once every byte is written
// and synced). After a write failure it keeps what was written and says where, and how many
// records that file holds.
func (b *Session) Close() error {
	defer b.stopSim()
	if b.out == nil {
		return nil
	}
	if b.w != nil {
		if err := b.flush(); err != nil {
			return err
		}
	}
	if err := b.out.Commit(); err != nil {
		return b.writeErr(err)
	}
	return nil
}

// Abort removes the records file being written, for a session that never sent a request.
func (b *Session) Abort() {
	if b.out != nil {
		b.out.Abort()
	}
	b.stopSim()
}

func (b *Session) stopSim() {
	b.closeSpans()
	if b.sim != nil {
		b.sim.Close()
		b.sim = nil
	}
}

// writeErr is a records write failure: the partial file is kept, named, and its records
// counted, so nothing already measured is lost without a word.
func (b *Session) writeErr(err error) error {
	var we *WriteError
	if errors.As(err, &we) {
		return err
	}
	kept := b.out.Keep()
	if kept == b.out.Path() {
		kept = "" // written directly (a device or pipe): nothing else to name
	}
	return &WriteError{Err: err, Partial: kept, Records: b.written}
}

// WriteError is a failure to write the records file.
type WriteError struct {
	Err     error
	Partial string // the file that holds what was written ("" when written to the target directly)
	Records int    // how many complete records it holds
}

func (e *WriteError) Error() string {
	if e.Partial == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (the partial records file %s holds %d records)", e.Err, e.Partial, e.Records)
}

func (e *WriteError) Unwrap() error { return e.Err }
