package selftest

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"servebench/load"
	"servebench/record"
)

func TestMaxInFlight(t *testing.T) {
	// an end and a start at the same instant do not overlap
	if got := maxInFlight([][2]int64{{1, 5}, {2, 3}, {3, 4}, {5, 6}}); got != 2 {
		t.Errorf("max in flight %d, want 2", got)
	}
	if got := maxInFlight(nil); got != 0 {
		t.Errorf("max in flight of nothing %d", got)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []func(*Config){
		func(c *Config) { c.Points = nil },
		func(c *Config) { c.Points = []int{0} },
		func(c *Config) { c.ITLs = []time.Duration{-1} },
		func(c *Config) { c.Tokens = 1 },
		func(c *Config) { c.Rounds = 0 },
		func(c *Config) { c.TTFT = 0 },
	} {
		cfg := Default()
		c(&cfg)
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	cfg := Default()
	if err := cfg.Validate(); err != nil {
		t.Errorf("the default: %v", err)
	}
}

// A client stamp between an event's write began and written is early by nothing, whatever its
// error against written; one before the write began is early by the difference.
func TestEarlyStamp(t *testing.T) {
	ms := int64(time.Millisecond)
	wall0 := 1000 * ms
	rec := record.Record{Phase: record.PhaseMeasure, Sent: 1 * ms, Dispatched: 1 * ms, Done: 40 * ms,
		Events: []record.Event{{T: 10 * ms}, {T: 20 * ms}}}
	var a pointAcc
	// event 0 read 5 ms before the simulator's stamp after the write (it ran late), inside
	// the bracket; event 1 read 3 ms before its write began
	a.add(&rec, []int64{wall0 + 15*ms, wall0 + 24*ms}, []int64{wall0 + 9*ms, wall0 + 23*ms}, wall0, 0, wall0)
	p := a.row(0, 1)
	if p.Matched != 2 || p.EarlyMaxMs != 3 || p.ErrMaxMs != -4 {
		t.Errorf("matched %d, early %.3f ms, error max %.3f ms; want 2, 3, -4", p.Matched, p.EarlyMaxMs, p.ErrMaxMs)
	}
	var b pointAcc
	b.add(&rec, []int64{wall0 + 15*ms, wall0 + 24*ms}, []int64{wall0 + 9*ms, wall0 + 19*ms}, wall0, 0, wall0)
	if p := b.row(0, 1); p.EarlyMaxMs != 0 {
		t.Errorf("early %.3f ms with every stamp inside its bracket, want 0", p.EarlyMaxMs)
	}
}

// TestPairAccuracy: a records file's measured requests are paired with the truth log by
// request id, on the file's own t0; warmup requests and other ids are left out.
func TestPairAccuracy(t *testing.T) {
	dir := t.TempDir()
	ms := int64(time.Millisecond)
	start := time.Unix(1000, 0)
	wall0 := start.UnixNano()
	f, err := os.Create(filepath.Join(dir, "r.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w := record.NewWriter(f)
	if err := w.WriteHeader(&record.Header{Start: start}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []record.Record{
		{ID: 0, Phase: record.PhaseWarmup, Scheduled: 0, Sent: ms, Done: 30 * ms,
			Events: []record.Event{{T: 5 * ms}, {T: 6 * ms}}},
		{ID: 1, Phase: record.PhaseMeasure, Scheduled: ms / 2, Dispatched: ms / 2, Sent: ms, Done: 30 * ms,
			Events: []record.Event{{T: 10 * ms}, {T: 20 * ms}}},
	} {
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	id := load.RequestID(0, 1)
	truth := fmt.Sprintf(`{"request_id":%q,"read_ns":%d,"arrived_ns":%d,"kind":"request"}
{"request_id":%q,"written_ns":%d,"write_began_ns":%d,"kind":"content"}
{"request_id":%q,"written_ns":%d,"write_began_ns":%d,"kind":"content"}
{"request_id":%q,"read_ns":%d,"kind":"request"}
`, id, wall0+2*ms, wall0+3*ms/2, id, wall0+21*ms/2, wall0+10*ms, id, wall0+20*ms, wall0+19*ms,
		load.RequestID(0, 0), wall0)
	tp := filepath.Join(dir, "truth.jsonl")
	if err := os.WriteFile(tp, []byte(truth), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := PairAccuracy(filepath.Join(dir, "r.jsonl"), tp)
	if err != nil {
		t.Fatal(err)
	}
	// TTFT (10 − 1) − (10.5 − 2) ms; ITL |10 − 9.5|; late 1 − 0.5; the send 1.5 − 1 ms; wire
	// (10 − 1) − (10.5 − 1.5) ms; the read lag 2 − 1.5 ms
	want := Accuracy{Measured: 1, TTFTPaired: 1, TTFT: []float64{0.5}, ITL: []float64{0.5},
		Event: []float64{-0.5, 0}, Late: []float64{0.5}, SendErr: []float64{0.5}, Wire: []float64{0}, ReadLag: []float64{0.5}}
	if !reflect.DeepEqual(*a, want) {
		t.Errorf("got %+v, want %+v", *a, want)
	}
}
