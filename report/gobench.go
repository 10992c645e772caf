package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"servebench/compare"
	"servebench/conditions"
	"servebench/metrics"
	"servebench/record"
)

// GoBench writes run-level figures in the Go benchmark format (golang.org/x/perf/benchfmt),
// one line per run, which stock benchstat reads as is (`benchstat base.bench cand.bench`):
//
//	model: llama-3.1-8b-instruct
//	server.version: 0.8.5
//	Unit ttft-p50-ms better=lower
//	BenchmarkServe/model=M/api=openai-completions/conc=16  200  21.3 ttft-p50-ms ... 5021 out-tok/s
//
// The name carries every load parameter of its run (conc=N for N closed-loop users; rate=R,
// with arrival=, burst= and maxconc= when they are not Poisson and uncapped, for an open
// loop; ramp= or trace= for a shaped schedule), so each sweep point has its own name and
// benchstat compares two sweeps point by point, while the runs of a --repeat share one name
// and become benchstat's n samples. The iteration count is the run's completed requests.
// Undefined figures are left out of the line rather than written as 0.
//
// The file-level "key: value" lines are every condition that must match for a comparison to
// mean anything (conditions.Blocking: model, server, GPU, workload, sampling; the client
// machine and unknown conditions are left out, and the load is in the name). benchstat makes a
// table per distinct set of them, so runs whose conditions differ are never compared; to
// compare across a deliberate change, say so as compare's --expect-change does:
// `benchstat -ignore server.version base.bench cand.bench`. "Unit" lines say which direction
// is better for each unit (benchfmt's better=lower|higher metadata).
func GoBench(w io.Writer, h *record.Header, runs []metrics.RunSummary) error {
	if h == nil {
		h = &record.Header{}
	}
	var b strings.Builder
	goBenchConfig(&b, h)
	for _, u := range goBenchUnits {
		better := "higher"
		if u.m.Lower {
			better = "lower"
		}
		fmt.Fprintf(&b, "Unit %s better=%s\n", u.unit, better)
	}
	for _, r := range runs {
		var vals strings.Builder
		for _, u := range goBenchUnits {
			// an undefined figure has no value for benchstat to read: its pair is left out
			if v, ok := u.m.FromSummary(r.Summary); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				fmt.Fprintf(&vals, "\t%.6g %s", v, u.unit)
			}
		}
		if vals.Len() == 0 {
			continue // a benchmark line needs a value: a run with no figure (no request) has no line
		}
		fmt.Fprintf(&b, "%s\t%d%s\n", goBenchName(h, loadOf(h, runEnd(h, r))), r.Summary.Completed, vals.String())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// goBenchConfig writes the conditions that must match as benchfmt configuration lines, in key
// order. benchfmt's keys start with a lower-case letter and hold no space or upper-case letter;
// values may hold spaces but not a line break, so a value is folded onto one line.
func goBenchConfig(b *strings.Builder, h *record.Header) {
	cs := conditions.Merge(conditions.FromHeader(h), h.Conditions)
	cs.Sort()
	for _, c := range cs {
		v := strings.Join(strings.Fields(c.Value), " ")
		k := benchConfigKey(c.Key)
		if v == "" || c.Source == conditions.Unknown || k == "" || !conditions.Blocking(c.Key) || inLoadName(c.Key) {
			continue
		}
		fmt.Fprintf(b, "%s: %s\n", k, v)
	}
	if h.Target.Simulated {
		b.WriteString("simulated: true\n")
	}
}

// inLoadName reports whether a load condition varies by sweep point and so belongs in the
// benchmark name, not in a file-level line (a sweep's header holds no single value for it).
func inLoadName(key string) bool {
	switch key {
	case "load.mode", "load.concurrency", "load.rate", "load.arrival", "load.burstiness", "load.max_concurrency":
		return true
	}
	return false
}

// benchConfigKey makes a condition key a valid benchfmt key (lower case, no space), or "".
func benchConfigKey(k string) string {
	k = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return '_'
		}
		return unicode.ToLower(r)
	}, k)
	if r := []rune(k); len(r) == 0 || !unicode.IsLower(r[0]) {
		return ""
	}
	return k
}

// runEnd is the run-end line of run r, or nil (an older file, or a run cut before its end).
func runEnd(h *record.Header, r metrics.RunSummary) *record.RunEnd {
	if e := summaryEnd(r.Summary); e != nil {
		return e
	}
	for i := range h.Ends {
		if h.Ends[i].Run == r.Run {
			return &h.Ends[i]
		}
	}
	return nil
}

// goBenchName is the benchmark name of a run at load l.
func goBenchName(h *record.Header, l runLoad) string {
	name := "BenchmarkServe/model=" + benchName(h.Target.Model) + "/api=" + benchName(h.Target.API)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	switch {
	case l.trace != "":
		name += "/trace=" + benchName(l.trace)
	case l.ramp != "":
		name += "/ramp=" + benchName(l.ramp)
	case l.rate > 0:
		name += "/rate=" + num(l.rate)
	default:
		name += "/conc=" + strconv.Itoa(l.users)
	}
	if l.openLoop() {
		if l.arrival != "poisson" {
			name += "/arrival=" + benchName(l.arrival)
		}
		if l.arrival == "gamma" {
			name += "/burst=" + num(l.burstiness)
		}
		if l.maxConc > 0 {
			name += "/maxconc=" + strconv.Itoa(l.maxConc)
		}
	}
	return name
}

// goBenchUnits are the figures written, with benchstat units (no spaces; "-ms" names the
// time unit because benchstat only knows ns for time). The better direction is compare's.
var goBenchUnits = []struct {
	m    compare.Metric
	unit string
}{
	{compare.TTFTp50, "ttft-p50-ms"}, {compare.TTFTp99, "ttft-p99-ms"},
	{compare.ITLp50, "itl-p50-ms"}, {compare.ITLp99, "itl-p99-ms"},
	{compare.TPOTp50, "tpot-p50-ms"}, {compare.E2Ep50, "e2e-p50-ms"}, {compare.E2Ep99, "e2e-p99-ms"},
	{compare.OutputTPS, "out-tok/s"}, {compare.ReqPS, "req/s"}, {compare.Goodput, "goodput-req/s"},
}

// benchName makes a value safe in a benchmark name: no spaces, no '/' (a name separator), no
// '=' (a key's end).
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

// renderGoBench is the gobench format: GoBench over every run of the input.
func renderGoBench(w io.Writer, ins []Input) error {
	runs, err := ins[0].summaries("gobench")
	if err != nil {
		return err
	}
	return GoBench(w, ins[0].Header, runs)
}
