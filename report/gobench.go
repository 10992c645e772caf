package report

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"servebench/compare"
	"servebench/conditions"
	"servebench/metrics"
	"servebench/record"
)

// GoBench writes run-level figures in the Go benchmark format, one line per run, which stock
// benchstat reads as is (`benchstat base.txt cand.txt`):
//
//	BenchmarkServe/model=M/api=openai-completions/load=c16  200  21.3 ttft-p50-ms ... 5021 out-tok/s
//
// The iteration count is the run's completed requests. File-level "key: value" lines carry
// the conditions that identify the run, so benchstat groups and labels by them. Undefined
// figures are left out of the line rather than written as 0.
func GoBench(w io.Writer, h *record.Header, runs []metrics.RunSummary) error {
	if h == nil {
		h = &record.Header{}
	}
	var b strings.Builder
	cs := conditions.Merge(conditions.FromHeader(h), h.Conditions)
	for _, k := range []string{conditions.Model, conditions.ServerFamily, conditions.ServerVer, conditions.GPUName, conditions.WorkloadHash} {
		if v := cs.Value(k); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	if h.Target.Simulated {
		b.WriteString("simulated: true\n")
	}
	name := "BenchmarkServe/model=" + benchName(h.Target.Model) + "/api=" + benchName(h.Target.API) + "/load=" + loadName(cs)
	for _, r := range runs {
		var vals strings.Builder
		for _, u := range goBenchUnits {
			if v, ok := u.m.FromSummary(r.Summary); ok {
				fmt.Fprintf(&vals, "\t%.6g %s", v, u.unit)
			}
		}
		if vals.Len() == 0 {
			continue // a benchmark line needs a value: a run with no figure (no request) has no line
		}
		fmt.Fprintf(&b, "%s\t%d%s\n", name, r.Summary.Completed, vals.String())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// goBenchUnits are the figures written, with benchstat units (no spaces; "-ms" names the
// time unit because benchstat only knows ns for time).
var goBenchUnits = []struct {
	m    compare.Metric
	unit string
}{
	{compare.TTFTp50, "ttft-p50-ms"}, {compare.TTFTp99, "ttft-p99-ms"},
	{compare.ITLp50, "itl-p50-ms"}, {compare.ITLp99, "itl-p99-ms"},
	{compare.TPOTp50, "tpot-p50-ms"}, {compare.E2Ep50, "e2e-p50-ms"}, {compare.E2Ep99, "e2e-p99-ms"},
	{compare.OutputTPS, "out-tok/s"}, {compare.ReqPS, "req/s"}, {compare.Goodput, "goodput-req/s"},
}

// benchName makes a value safe in a benchmark name: no spaces, no '/' (a name separator).
func benchName(s string) string {
	if s == "" {
		return "unknown"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '/' || r == '=' {
			return '_'
		}
		return r
	}, s)
}

func loadName(cs conditions.Set) string {
	if r := cs.Value("load.rate"); r != "" {
		return "rate" + r
	}
	return "c" + cs.Value("load.concurrency")
}

// renderGoBench is the gobench format: GoBench over every run of the input.
func renderGoBench(w io.Writer, ins []Input) error {
	runs, err := ins[0].summaries("gobench")
	if err != nil {
		return err
	}
	return GoBench(w, ins[0].Header, runs)
}
