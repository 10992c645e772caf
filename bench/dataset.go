package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"servebench/client/apis"
	"servebench/load/pacer"
	"servebench/runspec"
	"servebench/workload"
)

// dataset is what a dataset or shared-prefix workload adds to the header and the hash.
type dataset struct {
	id       *workload.DatasetID
	arrivals []int64 // a trace's arrival offsets (ns), for the workload hash
	sessions int     // multi-turn sessions built
}

// datasetWorkload builds part r of --dataset or --prefix-groups (parts.go) with the prompt
// tokenizer. The first part of a trace dataset also sets the run's arrival schedule.
func (b *Session) datasetWorkload(ctx context.Context, r int) (part, bool, error) {
	start := time.Now()
	pt, exact, err := b.buildDataset(ctx, r)
	if err == nil {
		b.logf("built %d prompts%s in %v (lengths %s)", len(pt.reqs), partOf(r, b.plan), time.Since(start).Round(time.Millisecond),
			b.lengthsNote(exact, pt.missed, len(pt.reqs)))
	}
	return pt, exact, err
}

func (b *Session) buildDataset(ctx context.Context, r int) (part, bool, error) {
	s := &b.spec
	tok, err := b.promptTokenizer(ctx)
	if err != nil {
		return part{}, false, err
	}
	chat := apis.IsChat(s.API)
	if s.Sessions() {
		return b.sessionWorkload(ctx, tok, chat, r)
	}
	if s.PrefixGroups > 0 {
		return b.prefixPart(ctx, tok, chat, r)
	}
	format, path := s.DatasetOf()
	in, err := b.openPart(ctx, "--dataset", path, r)
	if err != nil {
		return part{}, false, err
	}
	defer in.Close()
	limit := 0
	if s.IsSet("requests") {
		limit = s.Warmup + s.Requests
	}
	seed := seedFor(s.Seed, r)
	// the file is read once a part: parsed, then what a limit left unread is hashed (Sum)
	var pt part
	var exact bool
	switch format {
	case "sharegpt":
		sg := workload.ShareGPT{Count: b.plan.size(), Seed: seed, Chat: chat}
		var reqs []workload.Request
		reqs, exact, err = sg.Read(ctx, in, path, tok)
		if tf := b.tooFew(err); tf != nil {
			return part{}, false, tf
		}
		pt, err = part{reqs: reqs, warm: b.plan.warm}, b.inputErr("--dataset", err)
	case "mooncake":
		mc := workload.Mooncake{BlockTokens: s.BlockTokens, Seed: seed, Limit: limit, Chat: chat, Nonce: b.nonce}
		t, terr := mc.Read(ctx, in, path, tok)
		pt, exact, err = b.traceDataset(t, terr, r)
	default:
		bg := workload.BurstGPT{Seed: seed, Limit: limit, Chat: chat, Nonce: b.nonce}
		t, terr := bg.Read(ctx, in, path, tok)
		pt, exact, err = b.traceDataset(t, terr, r)
	}
	if err != nil {
		return part{}, false, err
	}
	if r > 0 {
		return pt, exact, nil
	}
	return pt, exact, b.identify(in, format)
}

// openInput opens a --dataset, --prompts or --trace file for one bounded, cancellable pass.
func (b *Session) openInput(ctx context.Context, flag, path string) (*workload.Input, error) {
	max, _ := b.spec.MaxInputBytes() // validated
	in, err := workload.OpenInput(ctx, path, max)
	if err != nil {
		return nil, b.inputErr(flag, err)
	}
	return in, nil
}

// openPart opens the dataset for part r. Every part draws its prompts from the file again
// (its own seed), so a later part needs a file that can be read again: a pipe or process
// substitution, read once, serves a single run only.
func (b *Session) openPart(ctx context.Context, flag, path string, r int) (*workload.Input, error) {
	if r > 0 {
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			return nil, runspec.Usagef("%s: %s is a pipe and can be read once, but each run of --repeat (and each sweep point) draws fresh prompts from the file: save it to a file first", flag, path)
		}
	}
	return b.openInput(ctx, flag, path)
}

// identify hashes the rest of the dataset file and records its identity.
func (b *Session) identify(in *workload.Input, format string) error {
	id, err := in.ID(format)
	if err != nil {
		return b.inputErr("--dataset", err)
	}
	if b.ds == nil {
		b.ds = &dataset{}
	}
	b.ds.id = &id
	return nil
}

// prefixPart builds part r of a shared-prefix workload: the warmup's requests in groups of
// their own (a seed of their own), so that no measured request finds its prefix warmed by the
// warmup, then the measured requests in --prefix-groups groups, whose prefixes are reused
// inside the run as the workload means.
func (b *Session) prefixPart(ctx context.Context, tok workload.Tokenizer, chat bool, r int) (part, bool, error) {
	s := &b.spec
	sp := func(n int, seed int64) workload.SharedPrefix {
		g := min(s.PrefixGroups, n)
		return workload.SharedPrefix{Groups: g, PerGroup: (n + g - 1) / g,
			PrefixTokens: s.PrefixTokens, SuffixTokens: s.InputTokens - s.PrefixTokens, OutputTokens: s.OutputTokens,
			Seed: seed, Order: workload.Order(orDefault(s.PrefixOrder, "interleaved")), Chat: chat, Count: n, Nonce: b.nonce}
	}
	var pt part
	exact := true
	if w := b.plan.warm; w > 0 {
		ws := sp(w, warmSeed(s.Seed, r))
		reqs, ex, err := ws.Generate(ctx, tok)
		if err != nil {
			return part{}, false, b.inputErr("--prefix-groups", err)
		}
		pt.reqs, pt.warm, exact = reqs, len(reqs), ex
	}
	ms := sp(b.plan.measured, seedFor(s.Seed, r))
	reqs, ex, err := ms.Generate(ctx, tok)
	if err != nil {
		return part{}, false, b.inputErr("--prefix-groups", err)
	}
	pt.reqs = append(pt.reqs, reqs...)
	if r == 0 {
		b.ds = &dataset{}
	}
	return pt, exact && ex, nil
}

// traceDataset takes a trace's requests and, for the first part, replays its arrival times as
// the run's schedule, split for this shard like a --trace file. A later part is the same
// trace's requests drawn with that part's seed: the same lengths and reuse, other texts.
func (b *Session) traceDataset(t *workload.Trace, err error, r int) (part, bool, error) {
	if err != nil {
		return part{}, false, b.inputErr("--dataset", err)
	}
	if r > 0 {
		return part{reqs: t.Plain(), missed: t.Missed, follows: t.Follows()}, t.Exact, nil
	}
	b.ds = &dataset{}
	as := make([]pacer.Arrival, len(t.Requests))
	b.ds.arrivals = make([]int64, len(t.Requests))
	for i, r := range t.Requests {
		as[i] = pacer.Arrival{T: r.At.Seconds(), InputTokens: r.InputTokens, OutputTokens: r.OutputTokens}
		b.ds.arrivals[i] = int64(r.At)
	}
	b.arrivals = as
	b.lc.Pacer = pacer.NewTrace(as)
	if b.spec.Requests == 0 && b.spec.Duration == 0 {
		b.spec.Requests = max(len(as)-b.spec.Warmup, 1) // recorded as what was sent
		b.lc.Requests = b.spec.Requests
	}
	if t.Dropped > 0 {
		b.logf("--dataset: %d rows without lengths (failed requests in the trace) or of another model were left out", t.Dropped)
	}
	b.shard = b.shard.bySession(t.Follows()) // a session's turns go to one shard
	return part{reqs: t.Plain(), missed: t.Missed, follows: t.Follows()}, t.Exact, b.shard.apply(&b.spec, &b.lc, as)
}

// lengthsNote says how a part's prompt lengths were obtained, for its "built" log line:
// "exact", "approximate" (no tokenizer), or what failed where a tokenizer measured them but
// some prompts could not be built to their length (missed of n, where the builder counts).
func (b *Session) lengthsNote(exact bool, missed, n int) string {
	switch {
	case exact:
		return "exact"
	case b.tokName == "":
		return "approximate: no tokenizer"
	case missed > 0:
		return fmt.Sprintf("approximate: %d of %d prompts could not be built to their length with %s", missed, n, b.tokName)
	}
	return "approximate: some prompts could not be built to their length with " + b.tokName
}

// inputErr makes an input file's bad content a usage error (its message names file, line and
// field; or the file is empty, too large or cannot be opened), Ctrl-C while reading it an
// interruption (it wraps context.Canceled), and anything else (a tokenizer that failed) a
// tool error.
func (b *Session) inputErr(flag string, err error) error {
	var ie *workload.InputError
	var pe *os.PathError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", flag, err)
	case errors.Is(err, workload.ErrInputTooLarge):
		return runspec.Usagef("%s: %v (--max-input raises it)", flag, err)
	case errors.As(err, &ie), errors.As(err, &pe), errors.Is(err, workload.ErrNoRequests), errors.Is(err, workload.ErrTooFew):
		return runspec.Usagef("%s: %v", flag, err)
	}
	return fmt.Errorf("%s: %s", flag, b.spec.Redact(err.Error()))
}

// tooFew makes a dataset with fewer usable items than asked for a usage error that says what
// was asked (the warmup requests are drawn from the dataset too, which --requests alone hides);
// nil for any other error.
func (b *Session) tooFew(err error) error {
	var tf *workload.TooFewError
	if !errors.As(err, &tf) {
		return nil
	}
	s := &b.spec
	var asked string
	switch {
	case s.NumPrompts > 0:
		asked = fmt.Sprintf("--num-prompts %d", s.NumPrompts)
	case s.Requests > 0:
		asked = fmt.Sprintf("%d measured (--requests) + %d warmup requests (--warmup; a run's warmup draws prompts of its own)", b.plan.measured, b.plan.warm)
	default:
		asked = "1000 prompts by default for --duration (--num-prompts)"
	}
	return runspec.Usagef("--dataset: %s (%s): ask for at most %d in all",
		b.spec.Redact(err.Error()), asked, tf.Usable)
}

// describe completes the header's workload fields for a dataset.
func (d *dataset) describe(b *Session) {
	w := &b.hdr.Workload
	if d.id != nil {
		w.Source = d.id.Format
		w.Dataset = d.id.Format + ":" + filepath.Base(d.id.File)
		w.DatasetSHA256 = d.id.SHA256
	} else if d.sessions == 0 {
		w.Source = "shared-prefix"
	}
	if d.sessions > 0 {
		w.Source += "+sessions" // synthetic+sessions or sharegpt+sessions
	}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// sessionWorkload builds part r of a multi-turn workload: synthetic turns, or a ShareGPT
// file's conversations, laid out turn by turn with the history sent again each turn. The
// part's counts are sessions: its warmup's own first, then the measured ones.
func (b *Session) sessionWorkload(ctx context.Context, tok workload.Tokenizer, chat bool, r int) (part, bool, error) {
	s := &b.spec
	var sessions []workload.Session
	var exact bool
	var err error
	n, seed := b.plan.size(), seedFor(s.Seed, r)
	if format, path := s.DatasetOf(); format == "sharegpt" {
		in, oerr := b.openPart(ctx, "--dataset", path, r)
		if oerr != nil {
			return part{}, false, oerr
		}
		defer in.Close()
		if r == 0 {
			b.ds = &dataset{}
		}
		sg := workload.ShareGPT{Count: n, Seed: seed, Chat: chat, MaxTurns: s.Turns}
		if sessions, exact, err = sg.ReadSessions(ctx, in, path, tok); err != nil {
			return part{}, false, b.inputErr("--dataset", err)
		}
		if r == 0 {
			if ierr := b.identify(in, format); ierr != nil {
				return part{}, false, ierr
			}
		}
	} else if format == "agent-trace" {
		return b.agentTraceWorkload(ctx, tok, chat, r, path) // tools.go
	} else {
		if r == 0 {
			b.ds = &dataset{}
		}
		ss := workload.SyntheticSessions{Count: n, Turns: s.Turns, UserTokens: s.InputTokens, OutputTokens: s.OutputTokens, Seed: seed, Nonce: b.nonce}
		sessions, exact, err = ss.Generate(ctx, tok)
	}
	if err != nil {
		return part{}, false, b.inputErr("--turns", err)
	}
	reqs, err := workload.SessionRequests(ctx, sessions, chat, tok)
	if err != nil {
		return part{}, false, fmt.Errorf("build sessions: %s", s.Redact(err.Error()))
	}
	if r == 0 {
		b.ds.sessions = len(sessions)
	}
	return part{reqs: reqs, warm: min(b.plan.warm, len(sessions)), sessions: len(sessions)}, exact && !chat, nil
}
