package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"servebench/record"
)

// shard encodes shard i/n of a run that started at start (wall clock): a warmup request at
// 10 ms, then measured requests sent every 100 ms from 200 ms on its own clock, span long.
func shard(t *testing.T, i, n int, start time.Time, span time.Duration) record.Source {
	t.Helper()
	var b bytes.Buffer
	w := record.NewWriter(&b)
	label := fmt.Sprintf("%d/%d", i, n)
	h := &record.Header{Start: start, Shard: label, Workload: record.Workload{Hash: "h"},
		Config: map[string]any{"rate": 10, "shard": label}}
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	write := func(r *record.Record) {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	write(&record.Record{ID: i, Phase: record.PhaseWarmup, Dispatched: 9 * ms, Sent: 10 * ms, Done: 50 * ms,
		Events: []record.Event{{T: 30 * ms, N: 1}, {T: 40 * ms, N: 1}}, OutputTokens: 2})
	for k, at := 1, 200*ms; at <= 200*ms+int64(span); k, at = k+1, at+100*ms {
		write(&record.Record{ID: i + k*n, Phase: record.PhaseMeasure, Scheduled: at, Dispatched: at, Sent: at, Done: at + 50*ms,
			Events: []record.Event{{T: at + 20*ms, N: 1}, {T: at + 40*ms, N: 1}}, OutputTokens: 2})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rd, err := record.NewReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	return record.Source{Name: fmt.Sprintf("shard-%d.jsonl", i), Reader: rd}
}

// merged summarises the shards merged as `servebench report shard-*.jsonl` does.
func merged(t *testing.T, srcs ...record.Source) *Summary {
	t.Helper()
	m, err := record.Merge(srcs)
	if err != nil {
		t.Fatal(err)
	}
	a := NewAccumulator(Options{})
	a.SetHeader(m.Header())
	var r record.Record
	for {
		err := m.Read(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		a.Add(&r)
	}
	return a.Summary()
}

func skewWarning(s *Summary) (Warning, bool) {
	for _, w := range s.Warnings {
		if strings.Contains(w.Text, "start skew") {
			return w, true
		}
	}
	return Warning{}, false
}

// TestShardStartSkew: shards whose wall-clock starts differ by d have a start skew of d (their
// first sends, warmup ones, are at the same offset of their own clocks), reported as
// information within 5% of the window, as a distortion beyond, and as invalidating beyond 25%.
func TestShardStartSkew(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		apart, span time.Duration
		level       Level
	}{
		{0, 10 * time.Second, Info},
		{300 * time.Millisecond, 10 * time.Second, Info},    // 3% of the window
		{2 * time.Second, 20 * time.Second, Distorts},       // 9%
		{2 * time.Second, 4 * time.Second, Invalidates},     // 33%
		{-2 * time.Second, 20 * time.Second, Distorts},      // the later shard is shard 0
		{1500 * time.Millisecond, time.Second, Invalidates}, // the shards hardly overlap
	} {
		s := merged(t, shard(t, 0, 3, t0, c.span), shard(t, 1, 3, t0.Add(c.apart), c.span), shard(t, 2, 3, t0, c.span))
		want := c.apart.Abs()
		if s.Shards != 3 || s.ShardStartSkew != want {
			t.Errorf("shards %v apart: %d shards, skew %v; want 3, %v", c.apart, s.Shards, s.ShardStartSkew, want)
		}
		w, ok := skewWarning(s)
		if !ok || w.Level != c.level || !strings.Contains(w.Text, fmtSkew(want)) {
			t.Errorf("shards %v apart over %v: warning %+v, want level %v naming %s", c.apart, c.span, w, c.level, fmtSkew(want))
		}
		if inv := len(s.Invalid()) > 0; inv != (c.level == Invalidates) {
			t.Errorf("shards %v apart over %v: INVALID %v", c.apart, c.span, inv)
		}
	}
	// one file is no merge: no skew, no note
	s := merged(t, shard(t, 0, 1, t0, time.Second))
	if _, ok := skewWarning(s); ok || s.ShardStartSkew != 0 {
		t.Errorf("a single file: skew %v, warnings %v", s.ShardStartSkew, s.Warnings)
	}
	if got := fmtSkew(2 * time.Second); got != "2.00 s" {
		t.Errorf("fmtSkew(2s) = %q", got)
	}
	if got := fmtSkew(12300 * time.Microsecond); got != "12.3 ms" {
		t.Errorf("fmtSkew(12.3ms) = %q", got)
	}
}
