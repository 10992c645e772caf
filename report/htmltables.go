package report

import (
	"fmt"
	"slices"

	"servebench/metrics"
)

// summaryRows are the run-level figures, one column per run, and the candidate's change in
// percent when there are two runs.
func summaryRows(runs []Run) []tableRow {
	type fig struct {
		name string
		v    func(s *metrics.Summary) *float64
		prec int
	}
	count := func(f func(s *metrics.Summary) int) func(*metrics.Summary) *float64 {
		return func(s *metrics.Summary) *float64 { return ptr(float64(f(s))) }
	}
	figs := []fig{
		{"completed", count(func(s *metrics.Summary) int { return s.Completed }), 0},
		{"failed", count(func(s *metrics.Summary) int { return s.Failed }), 0},
		{"window (s)", func(s *metrics.Summary) *float64 { return windowS(s) }, 3},
		{"requests/s", func(s *metrics.Summary) *float64 { return s.RequestThroughput }, 2},
		{"output tokens/s", func(s *metrics.Summary) *float64 { return s.OutputThroughput }, 1},
		{"total tokens/s", func(s *metrics.Summary) *float64 { return s.TotalTokenThroughput }, 1},
		{"peak output tokens/s (1 s)", func(s *metrics.Summary) *float64 { return peak(s) }, 0},
		{"goodput (req/s)", func(s *metrics.Summary) *float64 { return s.RequestGoodput }, 2},
		{"mean concurrency", func(s *metrics.Summary) *float64 { return s.MeanConcurrency }, 2},
		{"max in flight", count(func(s *metrics.Summary) int { return s.MaxInFlight }), 0},
		{"input tokens", count(func(s *metrics.Summary) int { return int(s.InputTokens) }), 0},
		{"output tokens", count(func(s *metrics.Summary) int { return int(s.OutputTokens) }), 0},
	}
	var rows []tableRow
	for _, f := range figs {
		row := tableRow{Name: f.name}
		var vals []*float64
		for _, r := range runs {
			v := f.v(r.Summary)
			vals = append(vals, v)
			row.Cells = append(row.Cells, optf(v, f.prec))
		}
		if len(vals) == 2 {
			row.Delta = delta(vals[0], vals[1])
		}
		rows = append(rows, row)
	}
	return rows
}

func windowS(s *metrics.Summary) *float64 {
	if s.Window <= 0 {
		return nil
	}
	return ptr(s.Window.Seconds())
}

func peak(s *metrics.Summary) *float64 {
	if s.PeakOutputTokensPerS == nil {
		return nil
	}
	return ptr(float64(*s.PeakOutputTokensPerS))
}

// delta is the candidate's change relative to the base, in percent.
func delta(a, b *float64) string {
	if a == nil || b == nil || *a == 0 {
		return dash
	}
	return fmt.Sprintf("%+.1f%%", fin(100*(*b-*a) / *a))
}

// latencyRows are the latency table: per metric, one row per run, with the percentile columns
// of the text report.
func latencyRows(runs []Run) ([]string, []latencyRow) {
	ps := tablePercentiles(runs[0].Summary)
	for _, r := range runs[1:] {
		if !slices.Equal(tablePercentiles(r.Summary), ps) {
			ps = nil // different percentile sets: show n, mean and max only
		}
	}
	var names []string
	for _, p := range ps {
		names = append(names, "p"+pctName(p))
	}
	split, reason := false, false
	for _, r := range runs {
		split = split || r.Summary.TTFTSplit != nil
		reason = reason || r.Summary.Reasoning != nil
	}
	var rows []latencyRow
	for k := range tableRowsWith(runs[0].Summary, split, reason) {
		for i, r := range runs {
			tr := tableRowsWith(r.Summary, split, reason)[k]
			name := tr.name
			if tr.scale == 1 {
				name += " (tok/s)"
			}
			lr := latencyRow{Name: name, Run: r.Label, Class: fmt.Sprintf("c%d", i), N: fmt.Sprint(tr.st.N),
				Mean: num(tr.st, tr.st.Mean, tr.scale), Max: num(tr.st, tr.st.Max, tr.scale), First: i == 0, Span: len(runs)}
			for _, p := range ps {
				v, _ := tr.st.Percentile(p)
				lr.Pcts = append(lr.Pcts, num(tr.st, v, tr.scale))
			}
			rows = append(rows, lr)
		}
	}
	return names, rows
}

// conditionRows lists every condition key of the runs, with each run's value; a key whose
// values differ is marked.
func conditionRows(runs []Run) []condRow {
	var rows []condRow
	index := map[string]int{}
	for i, r := range runs {
		if r.Header == nil {
			continue
		}
		for _, c := range r.Header.Conditions {
			k, ok := index[c.Key]
			if !ok {
				k = len(rows)
				index[c.Key] = k
				rows = append(rows, condRow{Key: c.Key, Source: c.Source, Values: make([]string, len(runs))})
			}
			rows[k].Values[i] = c.Value
		}
	}
	for i := range rows {
		for _, v := range rows[i].Values[1:] {
			rows[i].Differs = rows[i].Differs || v != rows[i].Values[0]
		}
	}
	return rows
}
