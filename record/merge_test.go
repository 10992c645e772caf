package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

var start0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// shardFile encodes a shard file with one record per id, sent 100 ms after its t0.
func shardFile(t *testing.T, shard string, startDelay time.Duration, hash string, ids ...int) Source {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b)
	h := &Header{Start: start0.Add(startDelay), Shard: shard, Workload: Workload{Hash: hash},
		Target:     Target{URL: "http://127.0.0.1:" + fmt.Sprint(40000+len(shard)+int(startDelay)), Simulated: true},
		Config:     map[string]any{"rate": 10, "url": "x" + shard, "shard": shard},
		Conditions: []Condition{{Key: "host", Value: "node-" + shard}, {Key: "gpu", Value: "none"}}}
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		ms := int64(time.Millisecond)
		r := &Record{ID: id, Phase: PhaseMeasure, Scheduled: 0, Dispatched: 99 * ms, Sent: 100 * ms, Connect: 5 * ms,
			Done: 300 * ms, Events: []Event{{T: 150 * ms, N: 1}, {T: 200 * ms, N: 2}}}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	// one scrape of the server at 50 ms on the shard's clock
	v := float64(len(ids))
	if err := w.WriteTelemetry(&Telemetry{T: 50 * int64(time.Millisecond), Source: "http://srv/metrics", OK: true,
		Series: []Series{{Name: "vllm:num_requests_waiting", Type: TypeGauge, Value: &v}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	return Source{Name: "shard-" + shard[:1] + ".jsonl", Reader: rd}
}

func TestMergeComplete(t *testing.T) {
	srcs := []Source{
		shardFile(t, "1/3", 2*time.Second, "h", 1, 4),
		shardFile(t, "0/3", time.Second, "h", 0, 3),
		shardFile(t, "2/3", 3*time.Second, "h", 2),
	}
	// a shard on a platform without kernel receive times is still the same run
	srcs[0].Reader.Header().Config["arrival_clock"] = "kernel"
	srcs[1].Reader.Header().Config["arrival_clock"] = "read"
	m, err := Merge(srcs)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Header()
	if !h.Start.Equal(start0.Add(time.Second)) || h.Shard != "" {
		t.Errorf("merged start %v shard %q", h.Start, h.Shard)
	}
	if h.Conditions[0].Value != "differs between shards: node-0/3 | node-1/3 | node-2/3" || h.Conditions[1].Value != "none" {
		t.Errorf("conditions %+v", h.Conditions)
	}
	got := map[int]Record{}
	var r Record
	for {
		err := m.Read(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c := r
		c.Events = append([]Event(nil), r.Events...)
		got[r.ID] = c
	}
	if len(got) != 5 {
		t.Fatalf("got %d records, want 5", len(got))
	}
	// each shard's telemetry is kept, moved onto the merged clock
	if len(h.Telemetry) != 3 {
		t.Fatalf("merged telemetry %+v, want one sample per shard", h.Telemetry)
	}
	var ts []int64
	for _, tl := range h.Telemetry {
		ts = append(ts, tl.T/int64(time.Millisecond))
	}
	slices.Sort(ts)
	if !slices.Equal(ts, []int64{50, 1050, 2050}) { // 50 ms after each shard's start, shard k k s after shard 0
		t.Errorf("merged telemetry at %v ms, want [50 1050 2050]", ts)
	}
	ms := int64(time.Millisecond)
	for id, r := range got {
		shift := int64(id%3) * 1000 * ms // shard k started k seconds after shard 0
		if r.Shard != id%3 || r.Sent != 100*ms+shift || r.Scheduled != shift || r.Connect != 5*ms ||
			r.Events[1].T != 200*ms+shift || r.Done != 300*ms+shift || r.Headers != 0 {
			t.Errorf("record %d: %+v", id, r)
		}
	}
}

func TestMergeRefuses(t *testing.T) {
	cases := []struct {
		name string
		srcs func() []Source
		want string
	}{
		{"missing", func() []Source {
			return []Source{shardFile(t, "0/3", 0, "h", 0), shardFile(t, "2/3", 0, "h", 2)}
		}, "incomplete run: shard 1/3 missing"},
		{"hash", func() []Source {
			return []Source{shardFile(t, "0/2", 0, "h", 0), shardFile(t, "1/2", 0, "other", 1)}
		}, "shard-1.jsonl: workload hash differs from shard-0.jsonl: not the same run"},
		{"duplicate", func() []Source {
			return []Source{shardFile(t, "0/2", 0, "h", 0), shardFile(t, "0/2", 0, "h", 2)}
		}, "shard 0/2 is also shard-0.jsonl"},
		{"count", func() []Source {
			return []Source{shardFile(t, "0/2", 0, "h", 0), shardFile(t, "1/3", 0, "h", 1)}
		}, "is one of 3 shards, shard-0.jsonl is one of 2"},
		{"not a shard", func() []Source {
			s := shardFile(t, "0/2", 0, "h", 0)
			s.Reader.Header().Shard = ""
			return []Source{s, shardFile(t, "1/2", 0, "h", 1)}
		}, "not a shard"},
		{"config", func() []Source {
			s := shardFile(t, "1/2", 0, "h", 1)
			s.Reader.Header().Config["rate"] = 20
			return []Source{shardFile(t, "0/2", 0, "h", 0), s}
		}, `config "rate" differs`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Merge(c.srcs())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestParseShard(t *testing.T) {
	for _, s := range []string{"", "1", "3/3", "-1/2", "a/b", "0/0"} {
		if _, _, err := ParseShard(s); err == nil {
			t.Errorf("ParseShard(%q) accepted", s)
		}
	}
	if i, n, err := ParseShard("2/8"); i != 2 || n != 8 || err != nil {
		t.Errorf("2/8: %d %d %v", i, n, err)
	}
}
