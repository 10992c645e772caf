package report

import (
	"fmt"
	"io"
	"strings"

	"servebench/metrics"
	"servebench/record"
)

// A sweep over server configurations (sweep --server-cmd) is one sweep per configuration,
// each in its own records file, and an index of them (record.ConfigSweep). Its report opens
// with the answer, then each configuration's sweep as `servebench sweep` prints it, then the
// configurations side by side: their time to ready and what became of them, the Pareto
// frontier of per-user output speed against total output throughput over every point of
// every configuration, and the pick: the configuration serving the highest load within the
// SLOs.

// SweepInput is one configuration's sweep: its records' header and runs (a zero value for a
// configuration that ran no point).
type SweepInput struct {
	Header *record.Header
	Runs   []metrics.RunSummary
}

// ConfigSweep writes the text report of a sweep over server configurations: idx, and
// sweeps[i] the sweep of idx.Configs[i].
func ConfigSweep(w io.Writer, idx *record.ConfigSweep, sweeps []SweepInput) error {
	var b strings.Builder
	textDocument(&b, configSweepSections(idx, sweeps))
	_, err := io.WriteString(w, strings.TrimPrefix(b.String(), "\n"))
	return err
}

// configView is one configuration with its points grouped.
type configView struct {
	run    record.ConfigRun
	end    *record.SweepEnd
	points []metrics.PointSummary
	in     SweepInput
}

func configViews(idx *record.ConfigSweep, sweeps []SweepInput) []configView {
	out := make([]configView, len(idx.Configs))
	for i, cr := range idx.Configs {
		out[i].run = cr
		if i < len(sweeps) && sweeps[i].Header != nil {
			out[i].in = sweeps[i]
			out[i].end = sweeps[i].Header.SweepEnd
			out[i].points = metrics.Points(sweeps[i].Header, sweeps[i].Runs)
		}
	}
	return out
}

// configSweepSections are the report's sections: the answer, each configuration's sweep,
// the configurations, the frontier and the pick.
func configSweepSections(idx *record.ConfigSweep, sweeps []SweepInput) []*Section {
	vs := configViews(idx, sweeps)
	pick := pickConfig(vs)
	secs := []*Section{{Name: "answer", Lines: []Line{{Label: "answer", Text: configAnswer(vs, pick)}}}}
	for _, v := range vs {
		name := v.run.Name
		if v.run.ReadySeconds > 0 {
			name += fmt.Sprintf(", ready after %.1f s", v.run.ReadySeconds)
		}
		sec := &Section{Name: "config-" + v.run.Name, Lines: []Line{{Label: "config", Text: name}, {Label: "", Text: "command: " + v.run.Command}}}
		if len(v.run.Env) > 0 {
			sec.Lines = append(sec.Lines, Line{Text: "environment: " + strings.Join(v.run.Env, " ")})
		}
		if v.run.Records != "" {
			sec.Lines = append(sec.Lines, Line{Text: "records: " + v.run.Records + ", server log: " + v.run.Log})
		}
		if v.run.Failure != "" {
			sec.Lines = append(sec.Lines, Line{Label: "FAILED", Text: v.run.Failure})
		}
		secs = append(secs, sec)
		if v.in.Header != nil {
			cs := sweepSections(v.in.Header, v.in.Runs)
			for _, c := range cs {
				// one page holds every configuration's sweep: names (HTML ids) and titles of its own
				c.Attached, c.Name, c.Title = true, v.run.Name+"-"+c.Name, v.run.Name+": "+c.Title
			}
			secs = append(secs, cs...)
		}
	}
	return append(secs, configTable(vs), frontierSection(vs), pickSection(vs, pick))
}

// configTable is the configurations side by side.
func configTable(vs []configView) *Section {
	head := []string{"configuration", "ready s", "points", "peak req/s", "SLO load", "status"}
	var rows [][]string
	for _, v := range vs {
		ready, peak, slo, status := dash, dash, dash, "served every point"
		if v.run.ReadySeconds > 0 {
			ready = fmt.Sprintf("%.1f", v.run.ReadySeconds)
		}
		if v.end != nil && v.end.PeakThroughput != nil {
			peak = optf(v.end.PeakThroughput, 2)
		}
		if v.end != nil && v.end.SLOLoad != nil {
			slo = v.end.SLOLoad.Label
		}
		switch {
		case v.run.Failure != "":
			status = "FAILED: " + map[string]string{"start": "did not start", "ready": "never ready", "run": "died during the run"}[v.run.FailureStage]
		case v.end != nil && v.end.Withheld != "":
			status = "INVALID"
		}
		rows = append(rows, []string{v.run.Name, ready, fmt.Sprint(len(v.points)), peak, slo, status})
	}
	return &Section{Name: "configurations", Heading: "configurations",
		Tables: []*Table{{Head: head, Rows: rows, Labels: 1, Note: "ready s: from the start to the first ready answer; SLO load: the highest load meeting the SLOs"}}}
}

// frontierPoint is one point of one configuration, as the frontier sees it.
type frontierPoint struct {
	config, label string
	x, y          *float64 // total output tok/s; per-user output tok/s (median request's)
	invalid       string
}

func frontierPoints(vs []configView) []frontierPoint {
	var out []frontierPoint
	for _, v := range vs {
		for i := range v.points {
			p := &v.points[i]
			fp := frontierPoint{config: v.run.Name, label: p.Label, x: p.Median(outTput), y: p.MedianPct(userRate, 50)}
			if v.run.Failure != "" {
				fp.invalid = "its server died during the run"
			}
			if v.end != nil && fp.invalid == "" {
				for _, sp := range v.end.Points {
					if sp.Label == p.Label && sp.Invalid != "" {
						fp.invalid = sp.Invalid
					}
				}
			}
			out = append(out, fp)
		}
	}
	return out
}

// frontierSection lists every point with its two figures and marks the Pareto frontier:
// the points no other point beats on both (metrics.Pareto); an INVALID point is never on it.
func frontierSection(vs []configView) *Section {
	fps := frontierPoints(vs)
	x, y, ok := make([]float64, len(fps)), make([]float64, len(fps)), make([]bool, len(fps))
	for i, p := range fps {
		ok[i] = p.invalid == "" && p.x != nil && p.y != nil
		if ok[i] {
			x[i], y[i] = *p.x, *p.y
		}
	}
	on := metrics.Pareto(x, y, ok)
	var rows [][]string
	for i, p := range fps {
		mark := ""
		switch {
		case p.invalid != "":
			mark = "left out: " + p.invalid
		case on[i]:
			mark = "frontier"
		}
		rows = append(rows, []string{p.config, p.label, optf(p.x, 0), optf(p.y, 1), mark})
	}
	return &Section{Name: "frontier", Heading: "frontier: total output throughput against each user's output speed",
		Tables: []*Table{{Head: []string{"configuration", "load", "out tok/s", "tok/s per user", ""}, Rows: rows, Labels: 2,
			Note: "tok/s per user: the median request's (output tokens − 1) / (E2E − TTFT), medians over a point's runs; frontier: no other point is higher on both"}}}
}

// pickConfig is the index of the configuration serving the highest load within the SLOs:
// the most users (or the highest rate) of its SLO load, and of two at the same load the one
// completing more requests per second; without SLOs, the highest peak throughput; -1 when none
// qualifies. An INVALID sweep, or a configuration whose server failed, is never picked.
func pickConfig(vs []configView) int {
	best := -1
	var bestLoad, bestRate float64
	slo := false
	for _, v := range vs {
		slo = slo || (v.end != nil && v.end.SLO != "")
	}
	for i, v := range vs {
		if v.end == nil || v.end.Withheld != "" || v.run.Failure != "" {
			continue
		}
		var load float64
		var rate *float64
		switch {
		case slo && v.end.SLOLoad != nil:
			p := v.end.SLOLoad
			load, rate = float64(p.Concurrency)+p.Rate, p.RequestThroughput
		case !slo:
			rate = v.end.PeakThroughput
		}
		if rate == nil {
			continue
		}
		if best < 0 || load > bestLoad || (load == bestLoad && *rate > bestRate) {
			best, bestLoad, bestRate = i, load, *rate
		}
	}
	return best
}

// pickSection names the pick and why.
func pickSection(vs []configView, pick int) *Section {
	sec := &Section{Name: "pick", Heading: "pick"}
	if pick < 0 {
		sec.Lines = []Line{{Label: "pick", Text: "none: no configuration served a load within the SLOs (or none finished a valid sweep)"}}
		return sec
	}
	v := vs[pick]
	if v.end.SLO != "" {
		sec.Lines = []Line{{Label: "pick", Text: fmt.Sprintf("%s: the highest load within %s (attainment ≥ %s): %s, %s req/s",
			v.run.Name, v.end.SLO, pctWords(v.end.TargetAttainment), v.end.SLOLoad.Label, optf(v.end.SLOLoad.RequestThroughput, 2))}}
		return sec
	}
	sec.Lines = []Line{{Label: "pick", Text: fmt.Sprintf("%s: the highest peak throughput, %s req/s (no --slo given: give one to pick by objectives)",
		v.run.Name, optf(v.end.PeakThroughput, 2))}}
	return sec
}

// configAnswer is the one sentence of a configuration sweep: the pick's answer, with how
// many configurations were tried and how many failed.
func configAnswer(vs []configView, pick int) string {
	failed := 0
	for _, v := range vs {
		if v.run.Failure != "" {
			failed++
		}
	}
	of := fmt.Sprintf("of %d server configurations", len(vs))
	if failed > 0 {
		of += fmt.Sprintf(" (%d failed)", failed)
	}
	if pick < 0 {
		return of + ", none served a load within the objectives: see each configuration below"
	}
	v := vs[pick]
	return of + ", " + answerOf(v.run.Name, v.end, v.points)
}
