package runspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"servebench/record"
	"servebench/workload"
)

// Base is the baseline of run --like: its header, and its prompts when they are replayed.
type Base struct {
	Path   string
	Header *record.Header
	// Requests are the baseline's own prompts (nil when they are built again: a workload
	// setting changed, or the baseline kept its prompts out of the records).
	Requests []workload.Request
	Exact    bool // the replayed prompts' lengths were measured exactly
	// Changes are the settings that differ from the baseline's, each as the baseline and this
	// run resolved it.
	Changes []record.Change
	// Rebuilt is true when a workload setting changed, so the prompts were built anew.
	Rebuilt bool
}

// OwnKeys are a run's own settings, never taken from a baseline: where the server is and how
// to reach it (the same server may move; a new one is the point of a comparison), where to
// write, and what the user declares about this run.
var OwnKeys = []string{"url", "model", "api-key", "header", "ready-timeout", "insecure", "output", "json",
	"quiet", "force", "like", "condition", "conditions", "config", "save-workload", "max-input", "otlp-listen"}

// quietKeys are taken from the baseline like any setting, but a different value is not a
// change of what is measured, so it is not listed as one.
var quietKeys = []string{"embed-prompts", "otlp-wait"}

// WorkloadKeys change the prompts themselves: when one of them changes, the workload is built
// anew from the merged settings instead of replayed.
var WorkloadKeys = []string{"input-tokens", "output-tokens", "range-ratio", "input-dist", "output-dist", "lengths", "prompts", "num-prompts", "seed", "api", "trace",
	"dataset", "block-tokens", "prefix-groups", "prefix-tokens", "prefix-order", "reuse", "turns", "nonce", "agent-steps"}

// derivedKeys are filled in by Resolve when the user did not set them: a baseline's value of
// one of them is taken only when the baseline's user set it, so that another load shape gets
// its own defaults (a --rate run made like a closed-loop one has no 16 users).
var derivedKeys = []string{"concurrency", "requests", "warmup"}

// Exclusive load settings: setting one of a group drops the baseline's value of the others.
var (
	openKeys   = []string{"rate", "ramp", "trace", "stages"}
	closedKeys = []string{"concurrency"}
	countKeys  = []string{"requests"}
	timeKeys   = []string{"duration", "warmup-duration", "cooldown-duration"}
)

// ToRun is the spec to run for the user's spec u: u resolved, or with --like, a run made like
// that baseline (Like; nil Base without --like). An unreadable baseline is a usage error.
func (u *Spec) ToRun() (Spec, *Base, error) {
	if u.Like == "" {
		return u.Resolve(), nil, nil
	}
	h, err := ReadHeader(u.Like)
	if err != nil {
		return Spec{}, nil, Usagef("--like: %v", err)
	}
	return Like(u, h, u.Like)
}

// ReadHeader reads the header line of a records file.
func ReadHeader(path string) (*record.Header, error) {
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

// Like returns the spec of a run made like the baseline whose header is h (read from path):
// the baseline's settings, then the user's own (every key user set, by flag or config file,
// overrides; the target and output are always user's), validated and resolved, with the list
// of every setting that changed. Any change of load shape works: closed to open loop, another
// rate, a duration instead of a count, another workload size.
func Like(user *Spec, h *record.Header, path string) (Spec, *Base, error) {
	baseCfg, baseSet, err := baseline(h, path)
	if err != nil {
		return Spec{}, nil, err
	}
	s := Default()
	for _, k := range Keys() {
		if slices.Contains(OwnKeys, k) || (slices.Contains(derivedKeys, k) && !baseSet[k]) {
			continue
		}
		s.Copy(&baseCfg, k)
		if v, _ := field(&s, k); !baseSet[k] || (v.IsZero() && k != "warmup") {
			s.unset(k) // a zero count or duration in a header is "not set", never a setting
		}
	}
	for _, k := range OwnKeys {
		s.Copy(user, k)
		if !user.IsSet(k) {
			s.unset(k)
		}
	}
	s.Like = path
	exclude := func(given, drop []string) {
		if anySet(user, given) {
			for _, k := range drop {
				if !user.IsSet(k) {
					s.clear(k)
				}
			}
		}
	}
	exclude(openKeys, append(slices.Clone(closedKeys), openKeys...))
	exclude(closedKeys, openKeys)
	exclude(countKeys, timeKeys)
	exclude(timeKeys[:1], countKeys)
	for _, k := range user.SetKeys() {
		if !slices.Contains(OwnKeys, k) {
			s.Copy(user, k)
		}
	}
	if err := s.Validate(); err != nil {
		return Spec{}, nil, err
	}
	s = s.Resolve()
	b := &Base{Path: path, Header: h}
	for _, k := range Keys() {
		if slices.Contains(OwnKeys, k) || slices.Contains(quietKeys, k) {
			continue
		}
		if before, after := baseCfg.Value(k), s.Value(k); before != after {
			b.Changes = append(b.Changes, record.Change{Key: k, Base: before, Value: after})
			b.Rebuilt = b.Rebuilt || slices.Contains(WorkloadKeys, k)
		}
	}
	if user.IsSet("nonce") && user.Nonce == "fresh" && !b.Rebuilt {
		// asked for text of its own: the baseline's lengths and settings, new words (the
		// baseline's value reads fresh too, so it is no change by value)
		b.Rebuilt = true
		b.Changes = append(b.Changes, record.Change{Key: "nonce", Base: orNonce(h.Workload.Nonce), Value: "fresh"})
	}
	return s, b, b.prompts(&s)
}

// orNonce is a header's nonce as a --nonce value: off for none.
func orNonce(n string) string {
	if n == "" {
		return "off"
	}
	return n
}

// baseline reads the baseline's resolved configuration and which of its settings its user
// set. A file from before that was recorded counts every recorded setting as set except the
// derived ones at their defaults.
func baseline(h *record.Header, path string) (Spec, map[string]bool, error) {
	c := Default()
	b, _ := json.Marshal(h.Config)
	if err := json.Unmarshal(b, &c); err != nil {
		return c, nil, Usagef("--like %s: its configuration: %v", path, err)
	}
	if _, ok := h.Config["arrival_clock"]; !ok {
		c.ArrivalClock = "read" // a baseline from before kernel receive times: measure as it did
	}
	if _, ok := h.Config["send_clock"]; !ok {
		c.SendClock = "write" // likewise before kernel send times
	}
	set := map[string]bool{}
	if h.ConfigSet != nil {
		for _, k := range h.ConfigSet {
			set[k] = true
		}
		return c, set, nil
	}
	for _, k := range Keys() {
		set[k] = true
	}
	c0 := c
	c0.Warmup, c0.set = 0, nil
	set["warmup"] = c.Warmup != c0.DefaultWarmup()
	set["concurrency"] = c.Concurrency != DefaultConcurrency
	set["requests"] = c.Requests != DefaultRequests
	return c, set, nil
}

func anySet(s *Spec, keys []string) bool {
	for _, k := range keys {
		if s.IsSet(k) {
			return true
		}
	}
	return false
}

// prompts takes the baseline's prompts when nothing changed them, or prepares to build them
// again exactly as the baseline did when it kept them out of its records.
func (b *Base) prompts(s *Spec) error {
	h := b.Header
	switch {
	case b.Rebuilt:
		return nil
	case len(h.Workload.Recipe) > 0:
		return b.fromRecipe()
	case len(h.Workload.Requests) > 0:
		reqs, err := DecodeRequests(h.Workload.Requests, s.OutputTokens)
		if err != nil {
			return Usagef("--like %s: its workload: %v", b.Path, err)
		}
		b.Requests, b.Exact = reqs, h.Workload.PromptLengths == "exact"
		return nil
	}
	// the baseline kept its prompts out of the records (--embed-prompts=false): the same
	// number of synthetic prompts (a file of parts builds them from the same settings, part by
	// part), and a prompts or tokenizer file that can be found from here
	if h.Workload.Source == "synthetic" && h.Workload.Count > 0 && len(h.Workload.Parts) == 0 {
		s.NumPrompts = h.Workload.Count
	}
	for _, f := range []struct{ flag, file string }{{"prompts", s.Prompts}, {"tokenizer", s.Tokenizer}} {
		if f.file == "" {
			continue
		}
		if _, err := os.Stat(f.file); err != nil {
			return Usagef("--like %s: the baseline kept its prompts out of the records (--embed-prompts=false), and its %s file %s is not found from here: give --%s PATH",
				b.Path, f.flag, f.file, f.flag)
		}
	}
	return nil
}

// EncodeRequests is a header's embedded workload: a JSON array of prompts-file lines.
func EncodeRequests(reqs []workload.Request) (json.RawMessage, error) {
	var jl bytes.Buffer
	if err := workload.Encode(&jl, reqs); err != nil {
		return nil, err
	}
	lines := bytes.Split(bytes.TrimSpace(jl.Bytes()), []byte("\n"))
	return json.RawMessage(append(append([]byte("["), bytes.Join(lines, []byte(","))...), ']')), nil
}

// DecodeRequests reads a header's embedded workload.
func DecodeRequests(raw json.RawMessage, defaultOut int) ([]workload.Request, error) {
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
