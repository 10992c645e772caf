package compare

import (
	"slices"

	"servebench/metrics"
)

// ServerRow is one of the server's own figures on both sides, for the reader beside the
// client's: its value per side (the median over the side's runs; nil when no run had it). It
// is information, not evidence: bucketed histograms, counters and sampled gauges are too
// coarse for a test, so no row of these enters the verdict.
type ServerRow struct {
	Name       string
	Unit       string // "ms", "%", "J/token" or "" (a count)
	Base, Cand *float64
}

// serverFigures are the rows, in order: the server's TTFT and ITL p50 from its histograms'
// increase, each followed by ours; preemptions, prefix-cache hit rate, KV usage max, GPU J/token.
var serverFigures = []struct {
	name, unit string
	get        func(s *metrics.Summary) (float64, bool)
}{
	{"server TTFT p50", "ms", func(s *metrics.Summary) (float64, bool) {
		if h := server(s).TTFT; h != nil {
			return h.P50 * 1e3, true
		}
		return 0, false
	}},
	{"servebench TTFT p50", "ms", func(s *metrics.Summary) (float64, bool) {
		return s.TTFT.Median / 1e6, s.Server != nil && s.TTFT.Valid()
	}},
	{"server ITL p50", "ms", func(s *metrics.Summary) (float64, bool) {
		if h := server(s).ITL; h != nil {
			return h.P50 * 1e3, true
		}
		return 0, false
	}},
	{"servebench ITL (chunk) p50", "ms", func(s *metrics.Summary) (float64, bool) {
		return s.ITLChunk.Median / 1e6, s.Server != nil && s.ITLChunk.Valid()
	}},
	{"preemptions", "", func(s *metrics.Summary) (float64, bool) { return deref(server(s).Preemptions) }},
	{"prefix-cache hit rate", "%", func(s *metrics.Summary) (float64, bool) {
		v, ok := deref(server(s).PrefixHitRate)
		return 100 * v, ok
	}},
	{"KV usage max", "%", func(s *metrics.Summary) (float64, bool) {
		if g := server(s).KVUsage; g != nil {
			return 100 * g.Max, true
		}
		return 0, false
	}},
	{"GPU energy per output token", "J/token", func(s *metrics.Summary) (float64, bool) {
		if g := server(s).GPU; g != nil {
			return deref(g.JoulesPerToken)
		}
		return 0, false
	}},
}

var noServer = &metrics.Server{}

// server is the summary's server section, or an empty one.
func server(s *metrics.Summary) *metrics.Server {
	if s.Server == nil {
		return noServer
	}
	return s.Server
}

func deref(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// serverRows are the server figures either side has; nil when neither side's records hold
// telemetry.
func serverRows(br, cr []metrics.RunSummary) []ServerRow {
	var rows []ServerRow
	for _, f := range serverFigures {
		row := ServerRow{Name: f.name, Unit: f.unit, Base: medianOf(br, f.get), Cand: medianOf(cr, f.get)}
		if row.Base != nil || row.Cand != nil {
			rows = append(rows, row)
		}
	}
	// ours alone is no server figure: without any of the server's, there is nothing to show
	for _, r := range rows {
		if r.Name != "servebench TTFT p50" && r.Name != "servebench ITL (chunk) p50" {
			return rows
		}
	}
	return nil
}

// medianOf is the median of a figure over runs (the middle one's mean for an even count).
func medianOf(runs []metrics.RunSummary, get func(*metrics.Summary) (float64, bool)) *float64 {
	var vs []float64
	for _, r := range runs {
		if r.Summary == nil {
			continue
		}
		if v, ok := get(r.Summary); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return nil
	}
	slices.Sort(vs)
	m := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		m = (vs[len(vs)/2-1] + m) / 2
	}
	return &m
}

// serverTail is the server's own histogram p99 for a tail metric of ours, in ms.
var serverTail = map[string]struct {
	name string
	get  func(s *metrics.Summary) (float64, bool)
}{
	TTFTp99.Name: {"server TTFT p99", func(s *metrics.Summary) (float64, bool) {
		if h := server(s).TTFT; h != nil && h.Count > 0 {
			return h.P99 * 1e3, true
		}
		return 0, false
	}},
	ITLp99.Name: {"server ITL p99", func(s *metrics.Summary) (float64, bool) {
		if h := server(s).ITL; h != nil && h.Count > 0 {
			return h.P99 * 1e3, true
		}
		return 0, false
	}},
}
