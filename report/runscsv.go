package report

import (
	"encoding/csv"
	"io"
	"strconv"

	"servebench/metrics"
	"servebench/record"
)

// The runs-csv format is one row per run of a records file (a repeat, a sweep point), like
// GuideLLM's benchmarks.csv: the run's load, throughput and latency percentiles, for a
// spreadsheet that plots runs against each other. Times are ms; an undefined figure is an
// empty cell, never 0. docs/csv.md documents the columns.

// runsCSVStat are the distributions of a runs-csv row and the percentiles written of each.
var runsCSVStat = []struct {
	name string
	st   func(s *metrics.Summary) metrics.Stat
}{
	{"ttft", func(s *metrics.Summary) metrics.Stat { return s.TTFT }},
	{"tpot", func(s *metrics.Summary) metrics.Stat { return s.TPOT }},
	{"itl", func(s *metrics.Summary) metrics.Stat { return s.ITLChunk }},
	{"e2el", func(s *metrics.Summary) metrics.Stat { return s.E2E }},
	{"queue", func(s *metrics.Summary) metrics.Stat { return s.Queue }},
	{"before_server", func(s *metrics.Summary) metrics.Stat { return decomp(s).BeforeServer }},
	{"server_queue", func(s *metrics.Summary) metrics.Stat { return decomp(s).Queue }},
	{"server_prefill", func(s *metrics.Summary) metrics.Stat { return decomp(s).Prefill }},
	{"server_ttft", func(s *metrics.Summary) metrics.Stat { return decomp(s).ServerTTFT }},
	{"to_client", func(s *metrics.Summary) metrics.Stat { return decomp(s).ToClient }},
	{"server_decode", func(s *metrics.Summary) metrics.Stat { return decomp(s).Decode }},
}

// decomp is the summary's TTFT decomposition, empty (every figure undefined) without one.
func decomp(s *metrics.Summary) *metrics.Decomposition {
	if s.Decomposition == nil {
		return &metrics.Decomposition{}
	}
	return s.Decomposition
}

// runsCSVPcts are the percentiles of each distribution in a row (a summary without one of
// them leaves its cell empty).
var runsCSVPcts = []float64{50, 90, 99}

// RunsCSVColumns are the columns of the runs-csv format, in order.
func RunsCSVColumns() []string {
	cols := []string{"run", "label", "target", "api", "model", "workload_hash", "simulated",
		"measured", "completed", "failed", "duration_s", "request_throughput", "output_throughput",
		"total_token_throughput", "total_input_tokens", "total_output_tokens", "mean_concurrency", "max_in_flight", "steady"}
	for _, d := range runsCSVStat {
		cols = append(cols, "mean_"+d.name+"_ms")
		for _, p := range runsCSVPcts {
			cols = append(cols, "p"+pctName(p)+"_"+d.name+"_ms")
		}
	}
	return append(cols, "warnings")
}

func renderRunsCSV(w io.Writer, ins []Input) error {
	runs, err := ins[0].summaries("runs-csv")
	if err != nil {
		return err
	}
	return RunsCSV(w, ins[0].Header, runs)
}

// RunsCSV writes one row per run with the columns of RunsCSVColumns; h may be nil.
func RunsCSV(w io.Writer, h *record.Header, runs []metrics.RunSummary) error {
	if h == nil {
		h = &record.Header{}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(RunsCSVColumns()); err != nil {
		return err
	}
	for _, r := range runs {
		if err := cw.Write(runsCSVRow(h, r)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func runsCSVRow(h *record.Header, r metrics.RunSummary) []string {
	s := r.Summary
	steady := ""
	if st := s.Steadiness; st != nil && st.Tested {
		steady = strconv.FormatBool(st.Steady)
	}
	row := []string{strconv.Itoa(r.Run), r.Label, h.Target.URL, h.Target.API, h.Target.Model, h.Workload.Hash,
		strconv.FormatBool(s.Simulated || h.Target.Simulated),
		strconv.Itoa(s.Measured), strconv.Itoa(s.Completed), strconv.Itoa(s.Failed), csvFloat(s.Window.Seconds(), s.Window > 0),
		csvPtr(s.RequestThroughput), csvPtr(s.OutputThroughput), csvPtr(s.TotalTokenThroughput),
		strconv.FormatInt(s.InputTokens, 10), strconv.FormatInt(s.OutputTokens, 10), csvPtr(s.MeanConcurrency),
		strconv.Itoa(s.MaxInFlight), steady}
	for _, d := range runsCSVStat {
		st := d.st(s)
		row = append(row, csvFloat(st.Mean/1e6, st.Valid()))
		for _, p := range runsCSVPcts {
			v, ok := st.Percentile(p)
			row = append(row, csvFloat(v/1e6, ok))
		}
	}
	return append(row, strconv.Itoa(len(s.Warnings)))
}

// csvFloat formats v in the shortest form that reads back exactly, or "" when undefined.
func csvFloat(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func csvPtr(p *float64) string {
	if p == nil {
		return ""
	}
	return csvFloat(*p, true)
}
