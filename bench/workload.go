package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"servebench/client"
	"servebench/client/apis"
	"servebench/conditions"
	"servebench/conditions/capture"
	"servebench/record"
	"servebench/runspec"
	"servebench/workload"
)

// prepareLoad resolves the load shape before the workload is built: a trace decides how many
// requests there are (and maybe their lengths).
func (b *Session) prepareLoad(ctx context.Context) error {
	lc, as, err := LoadConfig(ctx, &b.spec)
	if err != nil {
		return err
	}
	b.lc, b.arrivals = lc, as
	if as != nil && b.spec.Requests == 0 && b.spec.Duration == 0 {
		// recorded in the header as what was sent: the whole run's count, also for a shard
		b.spec.Requests = max(len(as)-b.spec.Warmup, 1)
	}
	sh, err := b.spec.ShardOf()
	b.shard = shard{Shard: sh}
	return err
}

// buildWorkload materialises the prompts (the baseline's for --like, from a file, or
// synthetic, built against the server's tokenizer when it has one), one part per run
// (parts.go), and hashes the workload.
func (b *Session) buildWorkload(ctx context.Context) error {
	s := &b.spec
	b.plan = b.planParts()
	var err error
	if b.nonce, err = b.pickNonce(); err != nil {
		return err
	}
	defer b.slowNotice(ctx, time.Now())()
	switch like := b.opt.Like; {
	case like != nil && like.Requests != nil && !s.TraceDataset():
		// (a trace dataset is read again instead: its arrivals are the schedule, and its
		// prompts are rebuilt exactly, checked by the hash)
		b.exact = like.Exact // the baseline's very prompts, run by run
		if b.parts, err = splitParts(like.Requests, like.Header.Workload.Parts); err != nil {
			return runspec.Usagef("--like %s: %v", like.Path, err)
		}
	case s.AnswersDataset(): // answers.go: one set, like a prompts file
		reqs, rerr := b.readAnswers(ctx)
		if rerr != nil {
			return rerr
		}
		b.parts = []part{{reqs: reqs}}
	case s.Prompts != "":
		reqs, rerr := b.readPrompts(ctx)
		if rerr != nil {
			return rerr
		}
		b.parts = []part{{reqs: reqs}}
	default:
		err = b.buildParts(ctx)
	}
	if err != nil {
		return err
	}
	b.assignAdapters() // lora.go: before the hash, so the mix is part of the workload's identity
	if err := b.attachMedia(); err != nil {
		return err
	}
	for i := range b.parts {
		if b.parts[i], err = b.withRepeats(ctx, b.parts[i]); err != nil {
			return err
		}
	}
	var parts []record.Part
	b.reqs, parts = joinParts(b.parts)
	if s.SaveWorkload != "" {
		if err := workload.Save(s.SaveWorkload, b.reqs); err != nil {
			return err
		}
	}
	samp, _ := s.Sampling()
	ws := workloadSettings{API: s.API, Sampling: samp, FixedOutput: s.FixedOutput, Seed: s.Seed}
	if b.ds != nil {
		ws.Arrivals, ws.Follows = b.ds.arrivals, b.parts[0].follows
	}
	// the hash is one run's workload, the first part: the later parts are the same settings
	// drawn further (and embedded), so a file of 3 repeats compares with one of 5
	hash, err := b.hashWorkload(ws)
	if err != nil {
		return err
	}
	b.hdr = b.header(hash)
	b.hdr.Workload.Parts = parts
	b.hdr.Workload.Lengths = lengthsOf(b.parts[0].reqs)
	b.hdr.Workload.ReusableShare = b.parts[0].measuredShare()
	b.hdr.Workload.RepeatsRecorded = true
	if b.opt.Sweep == "" {
		b.hdr.Load = b.loadShape()
	}
	if b.ds != nil {
		b.ds.describe(b)
	}
	// a shard sends its part of the workload, but the hash and the embedded workload are the
	// whole run's, so that `report` can check that shard files belong together
	if b.shard.Split() {
		b.hdr.Shard = s.Shard
	}
	return nil
}

// slowAfter and slowEvery pace slowNotice's lines.
var slowAfter, slowEvery = 5 * time.Second, 15 * time.Second

// slowNotice prints a line when the workload is still being built slowAfter after start,
// then every slowEvery, until the returned stop is called: reading a large dataset or
// tokenizing many prompts can take minutes, and a silent wait looks like a hang.
func (b *Session) slowNotice(ctx context.Context, start time.Time) (stop func()) {
	w := b.opt.Slow
	if w == nil {
		w = b.opt.Log
	}
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTimer(slowAfter)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				b.logMu.Lock()
				fmt.Fprintf(w, "building the workload: %v so far (Ctrl-C stops)\n", time.Since(start).Round(time.Second))
				b.logMu.Unlock()
				t.Reset(slowEvery)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// readPrompts reads a --prompts file in one bounded, cancellable pass.
func (b *Session) readPrompts(ctx context.Context) ([]workload.Request, error) {
	in, err := b.openInput(ctx, "--prompts", b.spec.Prompts)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	reqs, err := workload.Read(in, b.spec.Prompts, b.spec.OutputTokens)
	if err != nil && !errors.Is(err, context.Canceled) {
		return nil, runspec.Usage(err) // bad content: its message names the file and line
	}
	return reqs, b.inputErr("--prompts", err)
}

// workloadSettings are the request settings that belong to the workload's identity.
type workloadSettings struct {
	API         string          `json:"api"`
	Sampling    client.Sampling `json:"sampling"`
	FixedOutput bool            `json:"fixed_output"`
	Seed        int64           `json:"seed"`
	// a trace's arrivals (absent otherwise, so the hash of every other workload is what it
	// was). A dataset's identity is not hashed: the hash is what is sent, and the file's name
	// and content hash are conditions of their own, so a --like replay of its embedded
	// prompts has the baseline's hash.
	Arrivals []int64 `json:"arrivals,omitempty"`
	// a replayed trace's session chains (absent without them): which turn follows which
	// and after what gap decides when each is sent
	Follows []*workload.Follow `json:"follows,omitempty"`
}

// synthetic builds part r's seeded prompts of exact length with the server's tokenizer, or
// approximate ones when the server has no tokenize endpoint: the seed's stream from prompt
// r·size on, so part 0 is the workload a run of one part always had.
func (b *Session) synthetic(ctx context.Context, r int) (part, bool, error) {
	s := &b.spec
	n := b.plan.size()
	syn := workload.Synthetic{Count: n, First: r * n, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
		RangeRatio: s.RangeRatio, Seed: s.Seed, Nonce: b.nonce, Chat: apis.IsChat(s.API), Recipes: true, Lazy: lazy(n, s.InputTokens, s.RangeRatio)}
	if err := syn.Validate(); err != nil {
		return part{}, false, runspec.Usage(err)
	}
	var err error
	if syn.Lengths, err = b.lengthDists(ctx); err != nil { // lengths.go
		return part{}, false, err
	}
	tok, err := b.promptTokenizer(ctx)
	if err != nil {
		return part{}, false, err
	}
	start := time.Now()
	reqs, exact, err := syn.Generate(ctx, tok)
	if err != nil {
		return part{}, false, fmt.Errorf("build workload: %s", s.Redact(err.Error()))
	}
	if b.plan.twins {
		if err := addTwins(ctx, syn, tok, reqs, b.plan.warm, warmSeed(s.Seed, r)); err != nil {
			return part{}, false, err
		}
	}
	b.logf("built %d prompts%s in %v (lengths %s)", len(reqs), partOf(r, b.plan), time.Since(start).Round(time.Millisecond), b.lengthsNote(exact, 0, len(reqs)))
	return part{reqs: reqs, warm: b.plan.warm}, exact, nil
}

// partOf names part r in a log line ("" for a run of one part).
func partOf(r int, p plan) string {
	if r == 0 && p.parts <= 1 {
		return ""
	}
	return fmt.Sprintf(" for run %d", r+1)
}

// traceWorkload builds one request per trace arrival. Arrivals without lengths take
// --input-tokens and --output-tokens; arrivals with lengths get prompts of exactly that many
// tokens (when the server can tokenize), built per distinct length pair with a seed derived
// from --seed so the workload, and its hash, are reproducible.
func (b *Session) traceWorkload(ctx context.Context, r int) ([]workload.Request, bool, error) {
	s := &b.spec
	type pair struct{ in, out int }
	groups := map[pair][]int{}
	var order []pair
	for i, a := range b.arrivals {
		p := pair{s.InputTokens, s.OutputTokens}
		if a.InputTokens > 0 {
			p.in = a.InputTokens
		}
		if a.OutputTokens > 0 {
			p.out = a.OutputTokens
		}
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], i)
	}
	tok, err := b.promptTokenizer(ctx)
	if err != nil {
		return nil, false, err
	}
	reqs := make([]workload.Request, len(b.arrivals))
	exact := true
	total := 0 // prompt tokens of the whole trace: lazy or not is the workload's, not a group's
	for _, p := range order {
		total += p.in * len(groups[p])
	}
	for gi, p := range order {
		syn := workload.Synthetic{Count: len(groups[p]), InputTokens: p.in, OutputTokens: p.out,
			RangeRatio: s.RangeRatio, Seed: seedFor(s.Seed, r) + int64(gi), Nonce: b.nonce, Chat: apis.IsChat(s.API), Recipes: true,
			Lazy: lazy(1, total, s.RangeRatio)}
		if err := syn.Validate(); err != nil {
			return nil, false, runspec.Usagef("--trace: %w", err)
		}
		rs, ex, err := syn.Generate(ctx, tok)
		if err != nil {
			return nil, false, fmt.Errorf("build workload: %s", s.Redact(err.Error()))
		}
		exact = exact && ex
		for k, i := range groups[p] {
			reqs[i] = rs[k]
			reqs[i].ID = i
		}
	}
	b.logf("built %d prompts%s for the trace's arrivals (%d distinct lengths)", len(reqs), partOf(r, b.plan), len(order))
	return reqs, exact, nil
}

// header is the records file's first line.
func (b *Session) header(hash string) *record.Header {
	s := &b.spec
	src, lengths := "synthetic", "approximate"
	if s.Prompts != "" {
		src = filepath.Base(s.Prompts) // the file, wherever this run found it
	}
	if b.exact {
		lengths = "exact"
	}
	args := b.opt.Args
	if args == nil {
		args = os.Args[1:]
	}
	h := &record.Header{
		Version: b.opt.Version, GoVersion: runtime.Version(),
		Command: append([]string{"servebench"}, runspec.RedactArgs(args)...),
		Target:  record.Target{URL: runspec.RedactURL(b.target.BaseURL), API: s.API, Model: s.Model, Simulated: b.simulated},
		Workload: record.Workload{Hash: hash, Source: src, Count: len(b.parts[0].reqs), Seed: s.Seed,
			PromptLengths: lengths, File: s.SaveWorkload, Nonce: workload.FormatNonce(b.nonce)},
		Config:    s.Record(),
		ConfigSet: s.SetKeys(),
	}
	if h.ConfigSet == nil {
		h.ConfigSet = []string{} // recorded as "nothing set", not absent (an older file)
	}
	if b.tokName != "" {
		// it measured the prompts even where some could not be built to their length
		h.Workload.Tokenizer = b.tokName
	}
	return h
}

// recordConditions completes the header before it is written: the conditions (from the
// configuration, this machine, the server's own answers and the user's declarations, in
// increasing precedence, unknowns listed), the embedded workload, and for --like the baseline
// and the changes.
func (b *Session) recordConditions(ctx context.Context) error {
	declared, err := b.spec.Declared()
	if err != nil {
		return err
	}
	// the server's load state when asked is an observation of the run, kept apart from the
	// conditions, so that a run started cold compares with one started warm
	detected, observed := conditions.SplitObserved(capture.Detect(ctx, b.target, b.spec.Model))
	for _, o := range b.opt.Observed {
		observed.Put(o)
	}
	b.hdr.Conditions = conditions.Complete(conditions.Merge(conditions.FromHeader(b.hdr), capture.Host(b.opt.Version), detected, declared))
	if len(observed) > 0 {
		observed.Sort()
		b.hdr.Observed = observed
	}
	if b.spec.EmbedPrompts {
		if err := b.embedPrompts(); err != nil {
			return err
		}
	}
	like := b.opt.Like
	if like == nil {
		return nil
	}
	b.hdr.Like = &record.Like{File: like.Path, Hash: like.Header.Workload.Hash, Changes: like.Changes}
	if like.Requests != nil {
		// replayed prompts were measured by the baseline's tokenizer, not rebuilt here
		b.hdr.Workload.Tokenizer = like.Header.Workload.Tokenizer
	}
	for _, ch := range like.Changes {
		b.logf("--like %s: changed --%s: %s → %s", like.Path, ch.Key, orNone(ch.Base), orNone(ch.Value))
	}
	if b.hdr.Workload.Hash != like.Header.Workload.Hash && !like.Rebuilt {
		b.logf("warning: the workload differs from the baseline's (hash %s, baseline %s): compare will call the runs not comparable",
			short(b.hdr.Workload.Hash), short(like.Header.Workload.Hash))
	}
	return nil
}

// orNone shows a setting that is not set (a zero count, rate or duration) as none.
func orNone(v string) string {
	switch v {
	case "", "0", "0s", "[]":
		return "none"
	}
	return v
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}

// loadShape is the header's load: open or closed as the spec resolved it, and a replayed
// trace's arrivals and span.
func (b *Session) loadShape() *record.Load {
	l := &record.Load{Open: b.spec.OpenLoop(), Stages: b.lc.Stages}
	switch {
	case b.ds != nil && len(b.ds.arrivals) > 0:
		a := b.ds.arrivals
		l.Arrivals, l.Span = len(a), slices.Max(a)-slices.Min(a)
	case len(b.arrivals) > 0:
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, a := range b.arrivals {
			lo, hi = min(lo, a.T), max(hi, a.T)
		}
		// seconds to ns, bounded: a trace's offsets are checked when read, but the span must
		// not wrap whatever they are
		l.Arrivals, l.Span = len(b.arrivals), int64(min(max(hi-lo, 0)*1e9, float64(math.MaxInt64/2)))
	}
	return l
}
