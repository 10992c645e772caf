package bench

import (
	"context"
	"fmt"
	"slices"

	"servebench/record"
	"servebench/stat"
	"servebench/workload"
)

// Fresh prompts for every run. A server with a prefix cache answers a prompt it has seen from
// the cache, so a run that sends what the tool itself sent before (its warmup, an earlier
// repeat, an earlier sweep point) measures cache hits, not prefill. The workload is therefore
// built in parts, one per run of the file: part r holds its warmup's own prompts first (whole
// sessions for a multi-turn workload), then the measured ones, and run r sends part r. Part r
// is drawn from the seed and r (synthetic prompts continue the seed's stream; shared-prefix
// groups, sessions and dataset samples take a seed derived from r), so every part is new and
// the file stays exactly replayable: the header embeds every part, and run --like replays
// them run by run. The reuse a workload is built for (shared prefixes, a session's history)
// stays inside a part. A prompts file is sent as it is in every run: a replay the user asked
// for, as is --num-prompts (the runs of a part cycle through its prompts).

// part is the workload of one run: its requests, the first warm of them (sessions, for a
// multi-turn workload) the warmup's own; sessions counts a multi-turn part's sessions;
// repeats is what each request repeats of those before it (workload.Repeats), set once the
// part is complete (adapters and media assigned).
type part struct {
	reqs     []workload.Request
	warm     int
	sessions int
	repeats  []float64
	missed   int                // prompts a tokenizer measured but could not build to their length, where counted
	follows  []*workload.Follow // a trace's later turns of a session (load.Runner.Follows)
}

// withRepeats is pt with what each of its requests repeats by design: the prefix it shares
// with a request before it in the order the run first sends them (load.Runner.Repeats), in
// the prompt tokenizer's tokens when the workload was built with it (exact lengths), else as
// a share of the text.
func (b *Session) withRepeats(ctx context.Context, pt part) (part, error) {
	if !b.exact {
		pt.repeats = workload.Repeats(pt.reqs)
		return pt, nil
	}
	tok, err := b.promptTokenizer(ctx)
	if err != nil || tok == nil {
		pt.repeats = workload.Repeats(pt.reqs)
		return pt, err
	}
	pt.repeats, err = workload.CountRepeats(ctx, pt.reqs, tok)
	if err != nil {
		return pt, fmt.Errorf("count the repeated prefixes: %s", b.spec.Redact(err.Error()))
	}
	return pt, nil
}

// measuredShare is the share of the part's measured prompt tokens that repeat a request
// before them, as laid out (record.Workload.ReusableShare).
func (pt part) measuredShare() float64 {
	w := pt.warm
	if pt.sessions > 0 { // warm counts sessions: their turns lie first
		w = 0
		for w < len(pt.reqs) && pt.reqs[w].Session <= pt.warm {
			w++
		}
	}
	if w >= len(pt.reqs) {
		w = 0
	}
	return workload.RepeatedShare(pt.reqs[w:], pt.repeats[w:])
}

// plan is how many prompts (sessions) one part holds for its warmup and its measured requests,
// and how many parts are built before the first request.
type plan struct {
	warm, measured int
	parts          int  // built up front: embedded in the header and hashed
	fresh          bool // parts are laid out warmup first (false: one set cycled, as given)
	twins          bool // the warmup's second half repeats the measured extremes' lengths (twins.go)
}

// planParts sizes the parts from the resolved spec: the warmup (--warmup, or the one given by
// Options.WarmPrompts for a sweep whose points warm differently) and the measured count (or
// the workload size of a duration run). A sweep builds its later parts when it reaches them.
func (b *Session) planParts() plan {
	s := &b.spec
	p := plan{parts: max(1, s.Repeat)}
	if b.opt.Sweep != "" {
		p.parts = 1
	}
	if s.NumPrompts > 0 || s.Prompts != "" || b.arrivals != nil || s.TraceDataset() {
		p.measured = s.WorkloadSize() // as given: cycled, every run the same set's shape
		return p
	}
	p.fresh = true
	p.warm = s.Warmup
	if b.opt.WarmPrompts > 0 {
		p.warm = b.opt.WarmPrompts
	}
	if s.WarmupAuto {
		// warming stops when the server settles, up to --warmup-max requests: a pool of fresh
		// prompts that long warms like the measured load (a few prompts cycled would be
		// served from the cache, a regime the measurement never sees); past it the warmup
		// cycles its own pool, never the measured prompts
		pool := autoWarmPool
		if s.Sessions() {
			pool = max(autoWarmPool/s.Turns, 1) // sessions: about as many requests
		}
		p.warm = max(p.warm, min(s.WarmupMax, pool))
	}
	// a synthetic workload's warmup reaches the measured lengths' extremes (twins.go); not
	// --warmup auto's pool, which warms at the measured load's own mix, nor a sweep's shared
	// pool, whose points take its first prompts
	p.twins = !s.WarmupAuto && b.opt.WarmPrompts == 0
	if like := b.opt.Like; like != nil && !like.Rebuilt && len(like.Header.Workload.Parts) > 0 {
		// a baseline that kept its prompts out of its records: its parts' shape, rebuilt
		first := like.Header.Workload.Parts[0]
		n := first.Count
		if first.Sessions > 0 {
			n = first.Sessions
		}
		p.warm, p.measured = first.Warmup, max(n-first.Warmup, 1)
		return p
	}
	p.measured = s.Requests
	switch {
	case p.measured > 0:
	case s.Sessions(): // a duration run of sessions: the workload size counts turns
		p.measured = max(s.SessionCount()-(s.Warmup+s.Turns-1)/s.Turns, 1)
	default:
		p.measured = max(s.WorkloadSize()-s.Warmup, 1) // a duration run cycles through these
	}
	return p
}

// autoWarmPool is how many prompts of its own --warmup auto warms with before it cycles them.
const autoWarmPool = 256

// size is the number of prompts (sessions) of one part.
func (p plan) size() int { return p.warm + p.measured }

// seedFor is the seed of part r's draws: the run's own seed for the first part (so a run of
// one part is what it always was), a well-mixed derived one after it.
func seedFor(seed int64, r int) int64 {
	if r == 0 {
		return seed
	}
	return int64(uint64(seed) + uint64(r)*0x9E3779B97F4A7C15)
}

// warmSeed is the seed of part r's warmup draws where they are drawn apart from the measured
// ones (shared-prefix groups: the warmup's groups are its own, so no measured prefix is warm).
func warmSeed(seed int64, r int) int64 {
	return int64(uint64(seedFor(seed, r)) ^ 0x5741524D55500001)
}

// maxUpfrontPrompts bounds the prompts built before the first request: --repeat 100000000
// would otherwise build every run's prompts first (hours through /tokenize, memory without
// bound). The parts that fit (at least the first) are built before the run and embedded in
// the header; each later run builds its own when it starts (partFor), drawn from the seed and
// its run index as an up-front part is, so a --like replay rebuilds the very same prompts.
const maxUpfrontPrompts = 1 << 10

// upfrontKey is the context key of WithUpfrontPrompts.
type upfrontKey struct{}

// WithUpfrontPrompts returns ctx with the bound on the prompts built before the first request
// set to n in place of maxUpfrontPrompts (1,024), for the run it starts. It is for tests: the
// runs built late are reached after n prompts, not a thousand requests. It is a context value,
// not a flag or a package variable, so tests that set it run beside tests that do not.
func WithUpfrontPrompts(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, upfrontKey{}, n)
}

// upfrontPrompts is ctx's bound on the prompts built up front: maxUpfrontPrompts unless
// WithUpfrontPrompts set one.
func upfrontPrompts(ctx context.Context) int {
	if n, ok := ctx.Value(upfrontKey{}).(int); ok && n > 0 {
		return n
	}
	return maxUpfrontPrompts
}

// upfrontParts is how many of the plan's parts fit in limit prompts built before the first
// request (at least one).
func (p plan) upfrontParts(limit int) int {
	return max(1, min(p.parts, limit/max(p.size(), 1)))
}

// buildParts builds the parts made before the run: every run's for --repeat (the header embeds
// and hashes them all) while they fit in maxUpfrontPrompts, the first for a sweep.
func (b *Session) buildParts(ctx context.Context) error {
	for r := range b.plan.upfrontParts(upfrontPrompts(ctx)) {
		pt, exact, err := b.buildPart(ctx, r)
		if err != nil {
			return err
		}
		b.exact = exact && (r == 0 || b.exact)
		b.parts = append(b.parts, pt)
	}
	return nil
}

// buildPart builds part r.
func (b *Session) buildPart(ctx context.Context, r int) (part, bool, error) {
	s := &b.spec
	switch {
	case s.Dataset != "" || s.PrefixGroups > 0 || s.Sessions():
		return b.datasetWorkload(ctx, r)
	case b.arrivals != nil:
		reqs, exact, err := b.traceWorkload(ctx, r)
		return part{reqs: reqs}, exact, err
	}
	return b.synthetic(ctx, r)
}

// partFor is the part run r sends: built before the run, or built now (a sweep's later point,
// a --like run with more repeats than its baseline: fresh, never an earlier run's again); a
// prompts file is the one part, sent by every run.
func (b *Session) partFor(ctx context.Context, r int) (part, error) {
	if r < len(b.parts) {
		return b.parts[r], nil
	}
	if b.spec.Prompts != "" {
		return b.parts[0], nil
	}
	for len(b.parts) <= r {
		k := len(b.parts)
		pt, _, err := b.buildPart(ctx, k)
		if err != nil {
			return part{}, fmt.Errorf("build the prompts of run %d: %w", k, err)
		}
		// what buildWorkload gives the up-front parts: the part's adapters and media
		b.spec.LoRAMix().Assign(pt.reqs, b.spec.Seed, k)
		if err := b.attachPartMedia(pt.reqs); err != nil {
			return part{}, err
		}
		if pt, err = b.withRepeats(ctx, pt); err != nil {
			return part{}, err
		}
		b.parts = append(b.parts, pt)
	}
	return b.parts[r], nil
}

// joinParts is every part's requests in order (what is hashed, embedded and saved), and the
// header's description of the parts (none for one part without a warmup of its own, the shape
// of a file from before parts).
func joinParts(parts []part) ([]workload.Request, []record.Part) {
	var all []workload.Request
	var desc []record.Part
	split := len(parts) > 1
	for _, pt := range parts {
		all = append(all, pt.reqs...)
		desc = append(desc, record.Part{Count: len(pt.reqs), Warmup: pt.warm, Sessions: pt.sessions})
		split = split || pt.warm > 0
	}
	if !split {
		desc = nil
	}
	return all, desc
}

// splitParts cuts a baseline's embedded requests back into its parts (one part, cycled, for
// a file from before parts).
func splitParts(reqs []workload.Request, desc []record.Part) ([]part, error) {
	if len(desc) == 0 {
		return []part{{reqs: reqs}}, nil
	}
	var out []part
	at := 0
	for i, d := range desc {
		if d.Count < 1 || d.Warmup < 0 || d.Warmup > d.Count || d.Count > len(reqs)-at {
			return nil, fmt.Errorf("workload part %d (%d requests, %d warmup) does not fit the %d embedded requests", i, d.Count, d.Warmup, len(reqs))
		}
		out = append(out, part{reqs: reqs[at : at+d.Count], warm: d.Warmup, sessions: d.Sessions})
		at += d.Count
	}
	if at != len(reqs) {
		return nil, fmt.Errorf("the workload parts hold %d requests, the embedded workload %d", at, len(reqs))
	}
	return out, nil
}

// lengthsOf summarises the prompt and output lengths of reqs; prompt lengths that were not
// measured (0) are left out of the input's.
func lengthsOf(reqs []workload.Request) *record.Lengths {
	var in, out []int
	for _, r := range reqs {
		if r.InputTokens > 0 {
			in = append(in, r.InputTokens)
		}
		out = append(out, r.OutputTokens)
	}
	if len(out) == 0 {
		return nil
	}
	return &record.Lengths{Input: distOf(in), Output: distOf(out)}
}

// distOf is the mean, median (stat.Quantile's type 7: the mean of the two middle values of an
// even count) and maximum of xs.
func distOf(xs []int) record.Dist {
	if len(xs) == 0 {
		return record.Dist{}
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += float64(x)
	}
	n := len(xs)
	p50 := stat.QuantileAt(n, 50, func(i int) float64 { return float64(xs[i]) })
	return record.Dist{Mean: sum / float64(n), P50: p50, Max: xs[n-1]}
}
