package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Source is one records stream to merge: a name for messages (the file name) and its reader.
type Source struct {
	Name   string
	Reader *Reader
}

// MergeReader yields the records of several shard files of one split run as one run: every
// record's times are shifted onto the earliest shard's clock. Records come file by file (the
// metrics never depend on record order), so memory does not grow with the files.
type MergeReader struct {
	hdr   *Header
	srcs  []Source
	shift []int64 // ns added to every time of source i
	index []int   // shard index of source i
	cur   int
}

// ParseShard parses a shard label "i/n" (0 ≤ i < n).
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			n, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("shard %q: want i/n with 0 <= i < n", s)
	}
	return i, n, nil
}

// Merge checks that srcs are the shards of one run and returns a reader of their records as
// one run. They belong together when every header names a shard i/n of the same n, the
// indices 0..n−1 are each present exactly once, and they share the workload hash, the target
// (its URL aside when the target is the built-in simulator, which each shard process starts on
// its own port) and the configuration except "shard" (and "url" for the simulator).
//
// Alignment: each shard's Header.Start is its wall-clock t0, so a record time t of shard k
// becomes t + (Start_k − earliest Start) on the merged clock, whose Header.Start is the
// earliest. Durations (Connect) are not shifted. The merged header is shard 0's with Start
// moved, Shard cleared (in Config too) and conditions that differ between shards marked as such.
func Merge(srcs []Source) (*MergeReader, error) {
	if len(srcs) == 0 {
		return nil, errors.New("merge: no records files")
	}
	m := &MergeReader{srcs: srcs, shift: make([]int64, len(srcs)), index: make([]int, len(srcs))}
	if err := m.checkShards(); err != nil {
		return nil, err
	}
	first := srcs[slices.Index(m.index, 0)]
	for _, s := range srcs {
		if err := sameRun(first, s); err != nil {
			return nil, err
		}
	}
	earliest := first.Reader.Header().Start
	for _, s := range srcs {
		if st := s.Reader.Header().Start; st.Before(earliest) {
			earliest = st
		}
	}
	for i, s := range srcs {
		m.shift[i] = int64(s.Reader.Header().Start.Sub(earliest) / time.Nanosecond)
	}
	h := *first.Reader.Header()
	h.Start, h.Shard = earliest, ""
	h.Config = maps.Clone(h.Config)
	delete(h.Config, "shard")
	ordered := make([]Source, len(srcs))
	for i, s := range srcs {
		ordered[m.index[i]] = s
	}
	h.Conditions = mergeConditions(ordered)
	m.hdr = &h
	return m, nil
}

// checkShards checks every source names a shard of one n and that 0..n−1 are all present once.
func (m *MergeReader) checkShards() error {
	owner := map[int]string{}
	n0, name0 := 0, ""
	for k, s := range m.srcs {
		label := s.Reader.Header().Shard
		if label == "" {
			return fmt.Errorf("%s: not a shard (its header has no shard i/n): only the shard files of one split run are merged", s.Name)
		}
		i, n, err := ParseShard(label)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		if k == 0 {
			n0, name0 = n, s.Name
		} else if n != n0 {
			return fmt.Errorf("%s: shard %s is one of %d shards, %s is one of %d: not the same run", s.Name, label, n, name0, n0)
		}
		if prev, dup := owner[i]; dup {
			return fmt.Errorf("%s: shard %d/%d is also %s: a shard given twice", s.Name, i, n, prev)
		}
		owner[i] = s.Name
		m.index[k] = i
	}
	var missing []string
	for i := range n0 {
		if _, ok := owner[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n0))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("incomplete run: shard %s missing (have %d of %d files)", strings.Join(missing, ", "), len(owner), n0)
	}
	return nil
}

// sameRun checks that s was produced by the same run as ref (see Merge).
func sameRun(ref, s Source) error {
	a, b := ref.Reader.Header(), s.Reader.Header()
	differs := func(what string) error {
		return fmt.Errorf("%s: %s differs from %s: not the same run", s.Name, what, ref.Name)
	}
	if a.Workload.Hash != b.Workload.Hash {
		return differs("workload hash")
	}
	sim := a.Target.Simulated && b.Target.Simulated
	ta, tb := a.Target, b.Target
	if sim {
		ta.URL, tb.URL = "", ""
	}
	if ta != tb {
		return differs("target")
	}
	if k, ok := configDiff(a.Config, b.Config, sim); ok {
		return differs(fmt.Sprintf("config %q", k))
	}
	return nil
}

// configDiff returns the first key (sorted) whose value differs between a and b, ignoring
// "shard" and, for the simulator, "url".
func configDiff(a, b map[string]any, sim bool) (string, bool) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		// arrival_clock and send_clock follow each shard's platform (read and write where the
		// kernel gives no times); they stay visible as the conditions measurement.*_clock
		if k != "shard" && k != "arrival_clock" && k != "send_clock" && !(sim && k == "url") {
			sorted = append(sorted, k)
		}
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if !reflect.DeepEqual(normal(a[k]), normal(b[k])) {
			return k, true
		}
	}
	return "", false
}

// normal round-trips a value through JSON, so that a header built in memory (int 4) and one
// read from a file (float64 4) compare equal.
func normal(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// mergeConditions returns the first source's conditions (shard 0: srcs in shard order), with a value
// that differs between shards replaced by "differs between shards: a | b", so that a report
// does not claim one machine's facts for all.
func mergeConditions(srcs []Source) []Condition {
	out := slices.Clone(srcs[0].Reader.Header().Conditions)
	for i, c := range out {
		vals := []string{c.Value}
		for _, s := range srcs[1:] {
			for _, d := range s.Reader.Header().Conditions {
				if d.Key == c.Key && !slices.Contains(vals, d.Value) {
					vals = append(vals, d.Value)
				}
			}
		}
		if len(vals) > 1 {
			out[i].Value = "differs between shards: " + strings.Join(vals, " | ")
		}
	}
	return out
}

// Header returns the merged header.
func (m *MergeReader) Header() *Header { return m.hdr }

// Name returns the name of the source the last record (or error) came from.
func (m *MergeReader) Name() string { return m.srcs[min(m.cur, len(m.srcs)-1)].Name }

// Read reads the next record of the merged run into rec, as Reader.Read does: io.EOF after
// the last source, a *LineError (of the source Name names) for an invalid line, after which
// reading may continue. rec.Shard is set to the record's shard index. The header's Ends and
// Telemetry gain each shard's once its records are read.
func (m *MergeReader) Read(rec *Record) error {
	for m.cur < len(m.srcs) {
		err := m.srcs[m.cur].Reader.Read(rec)
		if errors.Is(err, io.EOF) {
			// the shard's run-end lines (stop reasons, measurement quality) are complete now:
			// they belong to the merged run too (one per shard and run; no times to shift)
			src := m.srcs[m.cur].Reader.Header()
			m.hdr.Ends = append(m.hdr.Ends, src.Ends...)
			// and so do its telemetry samples, on the merged clock; a server scraped by
			// several shards keeps one source name, so its samples form one series
			for _, tl := range src.Telemetry {
				tl.T += m.shift[m.cur]
				m.hdr.Telemetry = append(m.hdr.Telemetry, tl)
			}
			// and its server spans, joined by trace id, on the merged clock too
			for _, sl := range src.Spans {
				sl.Spans = slices.Clone(sl.Spans)
				for i := range sl.Spans {
					sl.Spans[i].Start += m.shift[m.cur]
					sl.Spans[i].End += m.shift[m.cur]
				}
				m.hdr.Spans = append(m.hdr.Spans, sl)
			}
			m.cur++
			continue
		}
		if err != nil {
			return err
		}
		rec.Shard = m.index[m.cur]
		Shift(rec, m.shift[m.cur])
		return nil
	}
	return io.EOF
}

// Shift adds d ns to every time of r. Times that did not happen (zero) stay zero; Scheduled is
// always shifted, as an intended send time of 0 is legitimate; Connect is a duration.
func Shift(r *Record, d int64) {
	if d == 0 {
		return
	}
	r.Scheduled += d
	for _, t := range []*int64{&r.Dispatched, &r.Sent, &r.Headers, &r.FirstEvent, &r.Done, &r.FirstAnswer} {
		if *t != 0 {
			*t += d
		}
	}
	for i := range r.Events {
		r.Events[i].T += d
	}
}
