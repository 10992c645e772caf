package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/record"
)

// TestRunsCSV: one row per run of a repeat file, with the figures of each run's summary.
func TestRunsCSV(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, "runs-csv", fileInput(t, "repeat.jsonl")); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || len(rows[0]) != len(RunsCSVColumns()) {
		t.Fatalf("%d rows of %d columns, want 1 + 3 of %d", len(rows), len(rows[0]), len(RunsCSVColumns()))
	}
	runs, err := fileInput(t, "repeat.jsonl").summaries("test")
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	for i, r := range runs {
		row := rows[i+1]
		p50, _ := r.Summary.TTFT.Percentile(50)
		got, _ := strconv.ParseFloat(row[col["p50_ttft_ms"]], 64)
		if row[col["run"]] != strconv.Itoa(r.Run) || row[col["completed"]] != strconv.Itoa(r.Summary.Completed) || got != p50/1e6 {
			t.Errorf("run %d: row %v", r.Run, row)
		}
	}
}

// TestSlices: the slices of a run add up to its records (every request sent and ended in one
// slice, every event's tokens in one), in CSV and JSON alike, and the width is honoured.
func TestSlices(t *testing.T) {
	in := fileInput(t, "base.jsonl")
	var sent, ended int
	var tokens int64
	for r, err := range in.Records {
		if err != nil {
			t.Fatal(err)
		}
		if r.Sent == 0 {
			continue
		}
		sent++
		ended++
		for _, e := range r.Events {
			tokens += int64(max(e.N, 1))
		}
	}
	in = fileInput(t, "base.jsonl")
	in.Slice = 100 * time.Millisecond
	var b bytes.Buffer
	if err := Render(&b, "slices-json", in); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Width  float64                      `json:"slice_s"`
		Slices []map[string]json.RawMessage `json:"slices"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	num := func(s map[string]json.RawMessage, k string) float64 {
		v, _ := strconv.ParseFloat(string(s[k]), 64)
		return v
	}
	var gotSent, gotEnded, gotTokens float64
	for _, s := range doc.Slices {
		gotSent += num(s, "sent")
		gotEnded += num(s, "completed") + num(s, "failed")
		gotTokens += num(s, "output_tokens")
		if w := num(s, "end_s") - num(s, "start_s"); w < 0.0999 || w > 0.1001 {
			t.Errorf("slice of %v s, want 0.1", w)
		}
	}
	if doc.Width != 0.1 || len(doc.Slices) < 2 || int(gotSent) != sent || int(gotEnded) != ended || int64(gotTokens) != tokens {
		t.Errorf("%d slices of %v s: sent %v ended %v tokens %v; records: %d %d %d", len(doc.Slices), doc.Width, gotSent, gotEnded, gotTokens, sent, ended, tokens)
	}
}

// TestSliceInFlight: a request spanning a slice and a half counts 1 in flight in the first
// and 0.5 in the second.
func TestSliceInFlight(t *testing.T) {
	sl := metrics.NewSlices(time.Second, nil)
	sl.Add(&record.Record{Phase: record.PhaseMeasure, Sent: 1, Done: 1500 * int64(time.Millisecond),
		Events: []record.Event{{T: 1200 * int64(time.Millisecond)}}, OutputTokens: 1, OutputTokensSource: record.SourceServer})
	ss := sl.Slices()
	if len(ss) != 2 || ss[0].InFlight != 1 || math.Abs(ss[1].InFlight-0.5) > 1e-6 || ss[1].Completed != 1 {
		t.Errorf("slices %+v", ss)
	}
}
