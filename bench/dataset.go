package bench

import (
	"context"
	"errors"
	"fmt"
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
	reusable float64 // the share of prompt tokens repeated as shared prefixes
	sessions int     // multi-turn sessions built
}

// datasetWorkload builds the prompts of --dataset or --prefix-groups with the prompt
// tokenizer. A trace dataset also sets the run's arrival schedule.
func (b *Session) datasetWorkload(ctx context.Context) ([]workload.Request, bool, error) {
	start := time.Now()
	reqs, exact, err := b.buildDataset(ctx)
	if err == nil {
		b.logf("built %d prompts in %v (lengths %s)", len(reqs), time.Since(start).Round(time.Millisecond),
			map[bool]string{true: "exact", false: "approximate"}[exact])
	}
	return reqs, exact, err
}

func (b *Session) buildDataset(ctx context.Context) ([]workload.Request, bool, error) {
	s := &b.spec
	tok, err := b.promptTokenizer(ctx)
	if err != nil {
		return nil, false, err
	}
	chat := apis.IsChat(s.API)
	if s.Sessions() {
		return b.sessionWorkload(ctx, tok, chat)
	}
	if s.PrefixGroups > 0 {
		n := s.WorkloadSize()
		sp := workload.SharedPrefix{Groups: s.PrefixGroups, PerGroup: (n + s.PrefixGroups - 1) / s.PrefixGroups,
			PrefixTokens: s.PrefixTokens, SuffixTokens: s.InputTokens - s.PrefixTokens, OutputTokens: s.OutputTokens,
			Seed: s.Seed, Order: workload.Order(orDefault(s.PrefixOrder, "interleaved")), Chat: chat}
		reqs, exact, err := sp.Generate(ctx, tok)
		b.ds = &dataset{reusable: sp.ReusableShare()}
		return reqs, exact, b.inputErr("--prefix-groups", err)
	}
	format, path := s.DatasetOf()
	id, err := workload.IdentifyFile(format, path)
	if err != nil {
		return nil, false, runspec.Usagef("--dataset: %v", err)
	}
	b.ds = &dataset{id: &id}
	limit := 0
	if s.IsSet("requests") {
		limit = s.Warmup + s.Requests
	}
	switch format {
	case "sharegpt":
		sg := workload.ShareGPT{Count: s.WorkloadSize(), Seed: s.Seed, Chat: chat}
		reqs, exact, err := sg.ReadFile(ctx, path, tok)
		if tf := b.tooFew(err); tf != nil {
			return nil, false, tf
		}
		return reqs, exact, b.inputErr("--dataset", err)
	case "mooncake":
		mc := workload.Mooncake{BlockTokens: s.BlockTokens, Seed: s.Seed, Limit: limit, Chat: chat}
		t, err := mc.ReadFile(ctx, path, tok)
		return b.traceDataset(t, err)
	default:
		bg := workload.BurstGPT{Seed: s.Seed, Limit: limit, Chat: chat}
		t, err := bg.ReadFile(ctx, path, tok)
		return b.traceDataset(t, err)
	}
}

// traceDataset takes a trace's requests and replays its arrival times as the run's schedule,
// split for this shard like a --trace file.
func (b *Session) traceDataset(t *workload.Trace, err error) ([]workload.Request, bool, error) {
	if err != nil {
		return nil, false, b.inputErr("--dataset", err)
	}
	as := make([]pacer.Arrival, len(t.Requests))
	b.ds.arrivals = make([]int64, len(t.Requests))
	for i, r := range t.Requests {
		as[i] = pacer.Arrival{T: r.At.Seconds(), InputTokens: r.InputTokens, OutputTokens: r.OutputTokens}
		b.ds.arrivals[i] = int64(r.At)
	}
	b.ds.reusable = t.ReusableShare
	b.arrivals = as
	b.lc.Pacer = pacer.NewTrace(as)
	if b.spec.Requests == 0 && b.spec.Duration == 0 {
		b.spec.Requests = max(len(as)-b.spec.Warmup, 1) // recorded as what was sent
		b.lc.Requests = b.spec.Requests
	}
	if t.Dropped > 0 {
		b.logf("--dataset: %d rows without lengths (failed requests in the trace) or of another model were left out", t.Dropped)
	}
	return t.Plain(), t.Exact, b.shard.apply(&b.spec, &b.lc, as)
}

// inputErr makes a dataset's bad input a usage error (its message names file, line and
// field), and anything else (a tokenizer that failed) a tool error.
func (b *Session) inputErr(flag string, err error) error {
	var ie *workload.InputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
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
		asked = fmt.Sprintf("%d measured (--requests) + %d warmup (--warmup) requests", s.Requests, s.Warmup)
	default:
		asked = "1000 prompts by default for --duration (--num-prompts)"
	}
	return runspec.Usagef("--dataset: %s (%s): ask for at most %d in all",
		b.spec.Redact(err.Error()), asked, tf.Usable)
}

// describe completes the header's workload fields for a dataset.
func (d *dataset) describe(b *Session) {
	w := &b.hdr.Workload
	w.ReusableShare = d.reusable
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

// sessionWorkload builds multi-turn sessions: synthetic turns, or a ShareGPT file's
// conversations, laid out turn by turn with the history sent again each turn.
func (b *Session) sessionWorkload(ctx context.Context, tok workload.Tokenizer, chat bool) ([]workload.Request, bool, error) {
	s := &b.spec
	var sessions []workload.Session
	var exact bool
	var err error
	if format, path := s.DatasetOf(); format == "sharegpt" {
		id, ierr := workload.IdentifyFile(format, path)
		if ierr != nil {
			return nil, false, runspec.Usagef("--dataset: %v", ierr)
		}
		b.ds = &dataset{id: &id}
		sg := workload.ShareGPT{Count: s.SessionCount(), Seed: s.Seed, Chat: chat, MaxTurns: s.Turns}
		sessions, exact, err = sg.ReadSessionsFile(ctx, path, tok)
	} else {
		b.ds = &dataset{}
		ss := workload.SyntheticSessions{Count: s.SessionCount(), Turns: s.Turns, UserTokens: s.InputTokens, OutputTokens: s.OutputTokens, Seed: s.Seed}
		sessions, exact, err = ss.Generate(ctx, tok)
	}
	if err != nil {
		return nil, false, b.inputErr("--turns", err)
	}
	reqs, err := workload.SessionRequests(ctx, sessions, chat, tok)
	if err != nil {
		return nil, false, fmt.Errorf("build sessions: %s", s.Redact(err.Error()))
	}
	b.ds.sessions = len(sessions)
	return reqs, exact && !chat, nil
}
