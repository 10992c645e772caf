package report

import (
	"fmt"
	"slices"
	"strings"

	"servebench/metrics"
)

// row is one line of the latency table.
type row struct {
	name  string
	st    metrics.Stat
	scale float64 // divide values by this: 1e6 for ns → ms, 1 for rates
}

// tableRows are the rows of the latency table, in reading order.
func tableRows(s *metrics.Summary) []row {
	return []row{
		{"TTFT", s.TTFT, 1e6},
		{"TTFT (first event)", s.TTFTFirstEvent, 1e6},
		{"TPOT", s.TPOT, 1e6},
		{"ITL (chunk)", s.ITLChunk, 1e6},
		{"ITL (token)", s.ITLToken, 1e6},
		{"E2E", s.E2E, 1e6},
		{"E2E incl. queue", s.E2EQueue, 1e6},
		{"queue", s.Queue, 1e6},
		{"decode tok/s/user", s.DecodeRate, 1},
	}
}

// tablePercentiles are the percentile columns: p50, p90, p99 when the summary has them,
// otherwise the summary's own percentile set.
func tablePercentiles(s *metrics.Summary) []float64 {
	want := []float64{50, 90, 99}
	for _, p := range want {
		if !slices.Contains(s.Percentiles, p) {
			return s.Percentiles
		}
	}
	return want
}

func textLatency(b *strings.Builder, s *metrics.Summary) {
	ps := tablePercentiles(s)
	fmt.Fprintf(b, "%-19s %8s %10s", "latency (ms)", "n", "mean")
	for _, p := range ps {
		fmt.Fprintf(b, " %10s", "p"+pctName(p))
	}
	fmt.Fprintf(b, " %10s\n", "max")
	for _, r := range tableRows(s) {
		fmt.Fprintf(b, "%-19s %8d %10s", r.name, r.st.N, num(r.st, r.st.Mean, r.scale))
		for _, p := range ps {
			v, _ := r.st.Percentile(p)
			fmt.Fprintf(b, " %10s", num(r.st, v, r.scale))
		}
		fmt.Fprintf(b, " %10s\n", num(r.st, r.st.Max, r.scale))
	}
}

// num formats a value of st in table units, or a dash for an empty set.
func num(st metrics.Stat, v, scale float64) string {
	if !st.Valid() {
		return dash
	}
	return fmt.Sprintf("%.2f", fin(v/scale))
}

// msP formats percentile p of a nanosecond distribution in ms.
func msP(st metrics.Stat, p float64) string { return percentileIn(st, p, 1e6) }

// percentileIn formats percentile p of st divided by scale, or a dash for an empty set.
func percentileIn(st metrics.Stat, p, scale float64) string {
	v, ok := st.Percentile(p)
	if !ok {
		return dash
	}
	return fmt.Sprintf("%.2f", fin(v/scale))
}

func msMax(st metrics.Stat) string { return num(st, st.Max, 1e6) }
