package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/record"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const ms = int64(time.Millisecond)

func header(sim bool) *record.Header {
	return &record.Header{
		Schema: 1, Version: "v0.1.0-test", Start: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Target: record.Target{URL: "http://127.0.0.1:8000", API: "openai-chat", Model: "llama-3-8b", Simulated: sim},
		Workload: record.Workload{Hash: "sha256:3f2a9c1b4d5e6f708192a3b4c5d6e7f8", Source: "synthetic",
			Count: 6, Seed: 42, PromptLengths: "exact"},
		Config: map[string]any{"concurrency": 4, "mode": "closed", "warmup": 1, "nested": map[string]any{"x": 1}},
	}
}

// rec builds a completed measured request: sent at s ms, content events at the given ms
// offsets after sent with per-event token counts.
func rec(id int, s int64, at []int64, n []int32) record.Record {
	r := record.Record{ID: id, Phase: record.PhaseMeasure, Scheduled: s*ms - ms, Dispatched: s*ms - ms/2,
		Sent: s * ms, FirstEvent: s*ms + at[0]*ms - 2*ms, PromptTokens: 128, PromptTokensSource: record.SourceServer,
		InputTokens: 128, OutputTokensSource: record.SourceServer, MaxTokens: 64}
	for i, t := range at {
		r.Events = append(r.Events, record.Event{T: (s + t) * ms, N: n[i]})
		r.OutputTokens += int(n[i])
	}
	r.Done = r.Events[len(r.Events)-1].T + ms
	return r
}

func basicRecords() []record.Record {
	warm := rec(0, 5, []int64{20, 30}, []int32{1, 1})
	warm.Phase = record.PhaseWarmup
	failed := rec(5, 300, []int64{40}, []int32{1})
	failed.ErrorClass, failed.Status, failed.Error = record.ErrHTTP5xx, 503, "overloaded"
	short := rec(4, 250, []int64{50, 70, 90}, []int32{1, 1, 1})
	short.FixedOutput = true
	return []record.Record{
		warm,
		rec(1, 100, []int64{40, 50, 60, 90}, []int32{1, 1, 1, 3}),
		rec(2, 110, []int64{45, 55, 65, 75}, []int32{1, 1, 1, 1}),
		rec(3, 200, []int64{120, 130, 200}, []int32{2, 1, 1}),
		short,
		failed,
	}
}

func summarise(h *record.Header, opt metrics.Options, recs []record.Record) *metrics.Summary {
	a := metrics.NewAccumulator(opt)
	a.SetHeader(h)
	for i := range recs {
		a.Add(&recs[i])
	}
	return a.Summary()
}

// golden compares got with testdata/golden/name; go test ./report -update rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./report -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./report -update rewrites it); got:\n%s", name, got)
	}
}

type fixture struct {
	name string
	h    *record.Header
	opt  metrics.Options
	recs []record.Record
}

func fixtures() []fixture {
	noUsage := basicRecords()[1:4]
	for i := range noUsage {
		r := &noUsage[i]
		r.OutputTokens, r.OutputTokensSource = len(r.Events), record.SourceCount
		r.PromptTokens, r.PromptTokensSource = 0, ""
		for j := range r.Events {
			r.Events[j].N = 0
		}
	}
	approx := header(false)
	approx.Workload.PromptLengths = "approximate"
	slo := metrics.SLO{TTFT: 50 * time.Millisecond, TPOT: 15 * time.Millisecond}
	return []fixture{
		{"basic", header(false), metrics.Options{SLO: slo}, basicRecords()},
		{"simulated_empty", header(true), metrics.Options{}, nil},
		{"estimates", approx, metrics.Options{Percentiles: []float64{50, 75}}, noUsage},
	}
}

func TestGolden(t *testing.T) {
	for _, f := range fixtures() {
		t.Run(f.name, func(t *testing.T) {
			s := summarise(f.h, f.opt, f.recs)
			var tb, jb bytes.Buffer
			if err := Text(&tb, f.h, s); err != nil {
				t.Fatal(err)
			}
			if err := JSON(&jb, f.h, s); err != nil {
				t.Fatal(err)
			}
			golden(t, f.name+".text.golden", tb.Bytes())
			golden(t, f.name+".json.golden", jb.Bytes())
		})
	}
}

func TestJSONNullsAndKeys(t *testing.T) {
	var b bytes.Buffer
	if err := JSON(&b, header(true), summarise(header(true), metrics.Options{}, nil)); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"mean_ttft_ms", "median_tpot_ms", "p99_itl_ms", "p99.9_e2el_ms", "std_itl_token_ms",
		"request_throughput", "request_goodput", "duration", "max_output_tokens_per_s", "mean_decode_rate_tok_s"} {
		v, ok := m[k]
		if !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if m["simulated"] != true || m["completed"] != 0.0 {
		t.Errorf("simulated %v completed %v", m["simulated"], m["completed"])
	}
}

func TestJSONVLLMKeys(t *testing.T) {
	recs := basicRecords()
	h := header(false)
	var b bytes.Buffer
	if err := JSON(&b, h, summarise(h, metrics.Options{}, recs)); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"completed", "failed", "duration", "total_input_tokens", "total_output_tokens",
		"request_throughput", "output_throughput", "total_token_throughput", "max_concurrent_requests",
		"mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "p99.9_tpot_ms", "p50_itl_ms",
		"p95_e2el_ms", "mean_ttft_first_event_ms", "p99_itl_token_ms", "mean_e2el_queue_ms", "p90_queue_ms",
		"mean_ttft_dispatch_ms", "warnings", "errors", "token_count_sources", "workload_hash"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %s missing", k)
		}
	}
	if m["completed"] != 4.0 || m["failed"] != 1.0 || m["warmup_discarded"] != 1.0 {
		t.Errorf("completed %v failed %v warmup %v", m["completed"], m["failed"], m["warmup_discarded"])
	}
}
