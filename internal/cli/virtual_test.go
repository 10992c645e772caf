package cli

import (
	"os"
	"testing"
	"time"

	"servebench/record"
	"servebench/sim"
	"servebench/vtime"
)

// liveNoise is what a live run over HTTP has beyond the engine model, as vtime's validation
// matrix lays it over its noisy shapes: steps up to 20% longer, a 50 ms stall all streams
// share after one step in 500, one dispatch in 20 late by 5 ms on average.
var liveNoise = vtime.Noise{StepJitter: 0.2, StallProb: 0.002, Stall: 50 * time.Millisecond, LateProb: 0.05, Late: 5 * time.Millisecond}

// writeVirtualRuns writes to path a records file of one run per seed: the real load runner
// (package load) driving c's engine model in virtual time (package vtime), l's load with each
// seed in turn, one header, every run's records and its run-end line, as `servebench run
// --repeat N` writes them. The runs differ as live runs of one workload do, by their noise
// and prompt lengths; every file's header names seed 1, so two files written from one load
// are comparable whatever their seeds. config is added to the header's effective
// configuration (e.g. "slo"). Verdict tests of the CLI read these files: what they check is
// the command's wiring (its exit codes, its text), on inputs that do not move with the
// machine's load; the verdicts' rates are compare's and metrics' own tests'.
func writeVirtualRuns(t *testing.T, path string, c sim.Config, l vtime.Load, seeds []uint64, config map[string]any) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := record.NewWriter(f)
	for run, seed := range seeds {
		l.Seed = seed
		res, err := vtime.Run(t, c, l)
		if err != nil {
			t.Fatal(err)
		}
		if run == 0 {
			res.Header.Workload.Seed = 1
			for k, v := range config {
				res.Header.Config[k] = v
			}
			if err := w.WriteHeader(res.Header); err != nil {
				t.Fatal(err)
			}
		}
		for i := range res.Records {
			r := &res.Records[i]
			r.Run = run
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		end := res.End
		end.Run = run
		if err := w.WriteRunEnd(&end); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}
