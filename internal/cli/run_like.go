package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"servebench/conditions"
	"servebench/metrics"
	"servebench/record"
	"servebench/workload"
)

// bindBaselineFlags registers the flags of issue 4: baselines, repeats and declared conditions.
func bindBaselineFlags(fs *pflag.FlagSet, c *runConfig) {
	fs.StringVar(&c.Like, "like", c.Like, "replay an earlier run's workload and load settings (its records file); flags given beside it override them and are recorded as deliberate changes")
	fs.IntVar(&c.Repeat, "repeat", c.Repeat, "run the same workload N times into one file (warmup before each), so run-to-run variation is measured")
	fs.StringArrayVar(&c.Conditions, "condition", c.Conditions, "declare a condition key=value that detection cannot see, e.g. gpu.name=H100 (repeatable)")
	fs.StringVar(&c.ConditionsFile, "conditions", c.ConditionsFile, "YAML file of declared conditions (key: value, nested maps flatten to dotted keys)")
}

// likeBase is the baseline of run --like.
type likeBase struct {
	path    string
	hdr     *record.Header
	reqs    []workload.Request // the baseline's prompts; nil when they must be rebuilt
	exact   bool
	changes []record.Change
	rebuilt bool // a workload flag changed beside --like, so the workload was built anew
}

// likeRebuild prepares to rebuild a baseline's workload that its header does not carry: the
// same number of synthetic prompts (warmup and requests may have changed beside --like), and
// a prompts or tokenizer file that can be found from here.
func likeRebuild(lc *runConfig, h *record.Header, path string) error {
	if h.Workload.Source == "synthetic" && h.Workload.Count > 0 {
		lc.NumPrompts = h.Workload.Count
	}
	for _, f := range []struct{ flag, file string }{{"prompts", lc.Prompts}, {"tokenizer", lc.Tokenizer}} {
		if f.file == "" {
			continue
		}
		if _, err := os.Stat(f.file); err != nil {
			return usageErr("--like %s: the baseline kept its prompts out of the records (--embed-prompts=false), and its %s file %s is not found from here: give --%s PATH",
				path, f.flag, f.file, f.flag)
		}
	}
	return nil
}

// ownFlags are the candidate's own settings, never taken from the baseline: where the server
// is and how to reach it (the same server may move; a new one is the point of a comparison),
// where to write, and what the user declares about this run.
var ownFlags = []string{"url", "model", "api-key", "header", "ready-timeout", "insecure", "output", "json", "quiet",
	"like", "condition", "conditions", "config", "save-workload"}

// quietFlags are taken from the baseline like any setting, but a different value beside
// --like is not a change of what is measured, so it is not listed as a deliberate change.
var quietFlags = []string{"embed-prompts"}

// workloadFlags change the prompts themselves: when one of them is changed beside --like, the
// workload is rebuilt from the merged settings instead of replayed.
var workloadFlags = []string{"input-tokens", "output-tokens", "range-ratio", "prompts", "num-prompts", "seed", "api", "trace"}

// applyLike resolves run --like FILE: the baseline header's configuration, then the flags given
// on this command line (each one that differs is a deliberate change), with the target settings
// always this run's own. It also checks the declared conditions, so that a bad --condition is
// a usage error before anything is sent.
func applyLike(cmd *cobra.Command, c *runConfig) (*runConfig, error) {
	if c.Repeat < 0 {
		return nil, usageErr("--repeat must be at least 1")
	}
	if _, err := declaredConditions(c); err != nil {
		return nil, err
	}
	if c.Like == "" {
		return c, nil
	}
	h, err := readHeader(c.Like)
	if err != nil {
		return nil, usageErr("--like: %v", err)
	}
	lc := defaultRunConfig()
	b, _ := json.Marshal(h.Config)
	if err := json.Unmarshal(b, &lc); err != nil {
		return nil, usageErr("--like %s: its configuration: %v", c.Like, err)
	}
	if _, ok := h.Config["arrival_clock"]; !ok {
		lc.ArrivalClock = "read" // a baseline from before kernel receive times: measure as it did
	}
	for _, name := range ownFlags {
		copyField(&lc, c, name)
	}
	lc.APIKey = c.APIKey
	like := &likeBase{path: c.Like, hdr: h}
	rebuild := false
	override := func(name string) {
		if slices.Contains(ownFlags, name) {
			return
		}
		before := fieldValue(&lc, name)
		copyField(&lc, c, name)
		if after := fieldValue(&lc, name); after != before && !slices.Contains(quietFlags, name) {
			like.changes = append(like.changes, record.Change{Key: name, Base: before, Value: after})
			rebuild = rebuild || slices.Contains(workloadFlags, name)
		}
	}
	// the user's own settings override the baseline: its --config file's keys, then the
	// flags on the command line
	for _, k := range c.fileKeys {
		override(k)
	}
	cmd.Flags().Visit(func(f *pflag.Flag) { override(f.Name) })
	like.rebuilt = rebuild
	switch {
	case !rebuild && len(h.Workload.Requests) > 0:
		if like.reqs, err = decodeRequests(h.Workload.Requests, lc.OutputTokens); err != nil {
			return nil, usageErr("--like %s: its workload: %v", c.Like, err)
		}
		like.exact = h.Workload.PromptLengths == "exact"
	case !rebuild:
		// the baseline kept its prompts out of the records (--embed-prompts=false): build
		// them again, exactly as it did
		if err := likeRebuild(&lc, h, c.Like); err != nil {
			return nil, err
		}
	}
	lc.like = like
	return &lc, lc.validate()
}

// fieldValue prints the runConfig field whose yaml key is name.
func fieldValue(c *runConfig, name string) string {
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		if strings.Split(v.Type().Field(i).Tag.Get("yaml"), ",")[0] == name {
			return fmt.Sprint(v.Field(i).Interface())
		}
	}
	return ""
}

// readHeader reads the header line of a records file.
func readHeader(path string) (*record.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := record.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rd.Header(), nil
}

// encodeRequests is the header's embedded workload: a JSON array of prompts-file lines.
func encodeRequests(reqs []workload.Request) (json.RawMessage, error) {
	var jl bytes.Buffer
	if err := workload.Encode(&jl, reqs); err != nil {
		return nil, err
	}
	lines := bytes.Split(bytes.TrimSpace(jl.Bytes()), []byte("\n"))
	return json.RawMessage(append(append([]byte("["), bytes.Join(lines, []byte(","))...), ']')), nil
}

func decodeRequests(raw json.RawMessage, defaultOut int) ([]workload.Request, error) {
	var lines []json.RawMessage
	if err := json.Unmarshal(raw, &lines); err != nil {
		return nil, err
	}
	var jl bytes.Buffer
	for _, l := range lines {
		jl.Write(l)
		jl.WriteByte('\n')
	}
	return workload.Read(&jl, "embedded workload", defaultOut)
}

// declaredConditions reads --conditions FILE then --condition key=value (which wins).
func declaredConditions(c *runConfig) (conditions.Set, error) {
	var file conditions.Set
	if c.ConditionsFile != "" {
		var err error
		if file, err = conditions.LoadFile(c.ConditionsFile); err != nil {
			return nil, usageErr("--conditions: %v", err)
		}
	}
	flags, err := conditions.ParseDeclared(c.Conditions)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return conditions.Merge(file, flags), nil
}

// recordBaseline completes the header before it is written: the conditions (from the
// configuration, this machine, the server's own answers and the user's declarations, in
// increasing precedence, unknowns listed), the embedded workload, and for --like the baseline
// and the deliberate changes.
func (b *bench) recordBaseline(ctx context.Context) error {
	declared, err := declaredConditions(b.cfg)
	if err != nil {
		return err
	}
	detected := conditions.Detect(ctx, b.target)
	b.hdr.Conditions = conditions.Complete(conditions.Merge(conditions.FromHeader(b.hdr), conditions.Host(Version), detected, declared))
	if b.cfg.EmbedPrompts {
		if b.hdr.Workload.Requests, err = encodeRequests(b.reqs); err != nil {
			return err
		}
	}
	like := b.cfg.like
	if like == nil {
		return nil
	}
	b.hdr.Like = &record.Like{File: like.path, Hash: like.hdr.Workload.Hash, Changes: like.changes}
	if like.reqs != nil {
		// replayed prompts were measured by the baseline's tokenizer, not rebuilt here
		b.hdr.Workload.Tokenizer = like.hdr.Workload.Tokenizer
	}
	for _, ch := range like.changes {
		b.logf("--like %s: deliberate change: --%s %s (baseline: %s)", like.path, ch.Key, ch.Value, ch.Base)
	}
	if b.hdr.Workload.Hash != like.hdr.Workload.Hash && !like.rebuilt {
		b.logf("warning: the workload differs from the baseline's (hash %s, baseline %s): compare will call the runs not comparable",
			short(b.hdr.Workload.Hash), short(like.hdr.Workload.Hash))
	}
	return nil
}

func short(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}

// runRepeats runs the load --repeat times (once by default) as runs 0..N-1 of the one records
// file, each with its own warmup, and returns the last run's summary (the one printed).
func (b *bench) runRepeats(ctx context.Context) (*metrics.Summary, error) {
	n := max(1, b.cfg.Repeat)
	if n == 1 {
		s, err := b.runPoint(ctx, b.lc, record.RunEnd{}, "")
		b.runs = []runSummary{{sum: s}}
		return s, err
	}
	var sum *metrics.Summary
	for i := range n {
		label := fmt.Sprintf("repeat %d/%d", i+1, n)
		s, err := b.runPoint(ctx, b.lc, record.RunEnd{Run: i, Label: label}, label)
		sum = s
		b.runs = append(b.runs, runSummary{run: i, label: label, sum: s})
		b.logf("%s: %s", label, runLine(s))
		if err != nil || ctx.Err() != nil {
			return sum, err
		}
	}
	return sum, nil
}

// runLine is one run's key figures in a line.
func runLine(s *metrics.Summary) string {
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
