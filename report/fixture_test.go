package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"servebench/compare"
	"servebench/metrics"
	"servebench/record"
)

// The golden tests of every format read small records files from testdata, as the CLI reads
// a user's. The files are built here, with fixed seeds and timestamps, so that they can be
// made again: go test ./report -update rewrites them (and every golden file), and without
// -update TestFixtureFiles checks that the checked-in files are what this code builds.

// fixtureSpec is one records file: its runs of n measured requests (plus one warmup each) by
// four closed-loop users, with TTFT and the gap between events around ttft and itl ms.
type fixtureSpec struct {
	file      string
	simulated bool
	runs, n   int
	ttft, itl float64
	seed      uint64
}

var fixtureSpecs = []fixtureSpec{
	{file: "base.jsonl", simulated: true, runs: 1, n: 24, ttft: 40, itl: 12, seed: 1},
	{file: "cand.jsonl", simulated: true, runs: 1, n: 24, ttft: 46, itl: 15, seed: 2},
	{file: "repeat.jsonl", runs: 3, n: 12, ttft: 40, itl: 12, seed: 3},
}

func fixtureHeader(sp fixtureSpec) *record.Header {
	h := &record.Header{
		Schema: record.SchemaVersion, Version: "v0.1.0-test", GoVersion: "go1.26",
		Command: []string{"servebench", "run", "--concurrency", "4", "--requests", fmt.Sprint(sp.n)},
		Start:   time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC),
		Target:  record.Target{URL: "http://127.0.0.1:8000", API: "openai-completions", Model: "llama-3.1-8b-instruct", Simulated: sp.simulated},
		Workload: record.Workload{Hash: "sha256:5be1c0ffee0ddba11c0ffee0ddba11c0ffee0ddba11c0ffee0ddba11c0ffee0",
			Source: "synthetic", Count: sp.n + 1, Seed: 7, PromptLengths: "exact"},
		Config: map[string]any{"concurrency": 4.0, "requests": float64(sp.n), "warmup": 1.0,
			"input_tokens": 64.0, "output_tokens": 16.0, "slo": []any{"ttft=60ms", "tpot=20ms"}},
		Conditions: []record.Condition{
			{Key: "model", Value: "llama-3.1-8b-instruct", Source: "detected"},
			{Key: "server.family", Value: "vllm", Source: "detected"},
			{Key: "server.version", Value: "0.8.5", Source: "detected"},
			{Key: "gpu.name", Value: "NVIDIA L4", Source: "declared"},
		},
	}
	if sp.runs > 1 {
		h.Command = append(h.Command, "--repeat", fmt.Sprint(sp.runs))
	}
	return h
}

// fixtureRecords builds one run: each user sends its next request when its last one ends.
// Request 0 is warmup; request 7 fails with HTTP 503; request 13 is cut mid-stream.
func fixtureRecords(sp fixtureSpec, run int, rng *rand.Rand) []record.Record {
	const ms = 1e6
	users := make([]int64, 4)
	for u := range users {
		users[u] = int64(run)*20e9 + 1e9 + int64(u)*3*ms
	}
	var recs []record.Record
	for i := range sp.n + 1 {
		u := i % len(users)
		s := users[u]
		r := record.Record{ID: i, Run: run, Phase: record.PhaseMeasure, Scheduled: s, Dispatched: s + ms/5,
			Sent: s + ms/2, InputTokens: 64, MaxTokens: 16, PromptTokens: 64, PromptTokensSource: record.SourceServer,
			OutputTokensSource: record.SourceServer}
		if i == 0 {
			r.Phase = record.PhaseWarmup
		}
		ttft := int64((sp.ttft + rng.NormFloat64()*sp.ttft/8) * ms)
		r.Headers = r.Sent + ttft*4/5
		switch i {
		case 7:
			r.Status, r.ErrorClass, r.Error = 503, record.ErrHTTP5xx, "overloaded"
			r.Done = r.Headers + ms
		default:
			r.Status = 200
			t := r.Sent + ttft
			r.FirstEvent = t - ms
			for k := 0; r.OutputTokens < 16; k++ {
				n := int32(1 + k%2) // one token, then two: the chunk and token ITL differ
				r.Events = append(r.Events, record.Event{T: t, N: n})
				r.OutputTokens += int(n)
				t += int64((sp.itl + rng.Float64()*sp.itl/2) * ms)
				if i == 13 && k == 3 {
					r.ErrorClass, r.Error = record.ErrTruncated, "stream ended before [DONE]"
					break
				}
			}
			r.Done = r.Events[len(r.Events)-1].T + ms/2
		}
		users[u] = r.Done + ms/10
		recs = append(recs, r)
	}
	return recs
}

// buildFixture encodes a whole records file: header, then each run's records and run-end line.
func buildFixture(sp fixtureSpec) ([]byte, error) {
	var b bytes.Buffer
	w := record.NewWriter(&b)
	if err := w.WriteHeader(fixtureHeader(sp)); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(sp.seed, 11))
	for run := range sp.runs {
		for _, r := range fixtureRecords(sp, run, rng) {
			if err := w.Write(&r); err != nil {
				return nil, err
			}
		}
		end := &record.RunEnd{Run: run, Concurrency: 4, Stop: "requests"}
		if sp.runs > 1 {
			end.Label = fmt.Sprintf("repeat %d of %d", run+1, sp.runs)
		}
		if err := w.WriteRunEnd(end); err != nil {
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func TestFixtureFiles(t *testing.T) {
	for _, sp := range fixtureSpecs {
		got, err := buildFixture(sp)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", sp.file)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./report -update creates it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what fixtureRecords builds: go test ./report -update rewrites it and the goldens", path)
		}
	}
}

// fileInput opens a records file of testdata as the CLI does: its header, and its records
// streamed once. The file is closed at the end of the test.
func fileInput(t *testing.T, name string) Input {
	t.Helper()
	if *update { // the fixture files are rewritten by TestFixtureFiles, which may not have run yet
		b, err := buildFixtureNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		return readerInput(t, name, bytes.NewReader(b))
	}
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return readerInput(t, name, f)
}

func buildFixtureNamed(name string) ([]byte, error) {
	for _, sp := range fixtureSpecs {
		if sp.file == name {
			return buildFixture(sp)
		}
	}
	return nil, fmt.Errorf("no fixture %s", name)
}

func readerInput(t *testing.T, name string, r io.Reader) Input {
	t.Helper()
	rd, err := record.NewReader(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return Input{Label: name[:len(name)-len(filepath.Ext(name))], Header: rd.Header(), Records: readAll(rd)}
}

// readAll yields every record of rd, reusing one Record as the CLI does.
func readAll(rd *record.Reader) iter.Seq2[*record.Record, error] {
	return func(yield func(*record.Record, error) bool) {
		var rec record.Record
		for {
			err := rd.Read(&rec)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(&rec, nil) {
				return
			}
		}
	}
}

// fileSide reads a records file of testdata into a comparison side, as `compare` does.
func fileSide(t *testing.T, name string) *compare.Side {
	t.Helper()
	in := fileInput(t, name)
	opt, err := metrics.HeaderOptions(in.Header)
	if err != nil {
		t.Fatal(err)
	}
	s := compare.NewSide(in.Header, opt)
	for r, err := range in.Records {
		if err != nil {
			t.Fatal(err)
		}
		s.Add(r)
	}
	return s
}
