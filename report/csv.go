package report

import (
	"encoding/csv"
	"io"
	"iter"
	"math"
	"strconv"

	"servebench/metrics"
	"servebench/record"
)

// CSVColumns are the columns of CSV, in order. docs/csv.md documents each one.
var CSVColumns = []string{
	"id", "run", "phase", "shard",
	"scheduled_ms", "dispatched_ms", "sent_ms", "headers_ms", "first_event_ms", "done_ms", "connect_ms", "events",
	"ttft_ms", "ttft_first_event_ms", "ttft_dispatch_ms", "e2el_ms", "e2el_queue_ms", "stream_ms", "queue_ms",
	"client_overhead_ms", "tpot_ms", "itl_mean_ms", "itl_max_ms", "decode_rate_tok_s",
	"input_tokens_requested", "prompt_tokens", "prompt_tokens_source", "max_tokens", "fixed_output",
	"output_tokens", "output_tokens_source", "status", "error_class", "error", "simulated",
	"ttfo_ms", "reasoning_tokens", "answer_tokens", "trace_id",
}

// CSV writes one row per request (warmup and failed requests included: filter on phase and
// error_class) with the columns of CSVColumns. Per-request figures come from
// metrics.PerRequest, the formulas of the summary. Times are milliseconds, exact to the
// nanosecond; an undefined figure is an empty cell, never 0. The simulated column repeats the
// header's flag on every row so that a spreadsheet cut from the file still says so.
//
// CSV stops at the first error recs yields and returns it; h may be nil.
func CSV(w io.Writer, h *record.Header, recs iter.Seq2[*record.Record, error]) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	sim := strconv.FormatBool(h != nil && h.Target.Simulated)
	row := make([]string, 0, len(CSVColumns))
	for r, err := range recs {
		if err != nil {
			return err
		}
		row = csvRow(row[:0], r, sim)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvRow(row []string, r *record.Record, sim string) []string {
	m := metrics.PerRequest(r)
	itoa := strconv.Itoa
	row = append(row, itoa(r.ID), itoa(r.Run), r.Phase, itoa(r.Shard),
		nsMS(float64(r.Scheduled)), when(r.Dispatched), when(r.Sent), when(r.Headers), when(r.FirstEvent),
		when(r.Done), when(r.Connect), itoa(len(r.Events)))
	for _, v := range []metrics.Opt{m.TTFT, m.TTFTFirstEvent, m.TTFTDispatch, m.E2E, m.E2EQueue,
		m.StreamTime, m.Queue, m.ClientOverhead, m.TPOT, m.ITLMean, m.ITLMax} {
		row = append(row, optMS(v))
	}
	rate := ""
	if m.DecodeRate.OK {
		rate = strconv.FormatFloat(m.DecodeRate.V, 'f', 3, 64)
	}
	status := ""
	if r.Status != 0 {
		status = itoa(r.Status)
	}
	row = append(row, rate, itoa(r.InputTokens), itoa(m.PromptTokens), m.PromptTokensSource,
		itoa(r.MaxTokens), strconv.FormatBool(r.FixedOutput), itoa(m.OutputTokens), m.OutputTokensSource,
		status, r.ErrorClass, r.Error, sim)
	row = csvReasoning(row, m) // reasoning.go
	return append(row, r.TraceID)
}

// nsMS formats ns as ms, rounded to the whole nanosecond (the resolution of the records), in
// the shortest form: 99 ms is "99", 1.5 µs is "0.0015".
func nsMS(ns float64) string { return strconv.FormatFloat(math.Round(ns)/1e6, 'f', -1, 64) }

// when formats a time that may not have happened (0) as ms, or empty.
func when(ns int64) string {
	if ns == 0 {
		return ""
	}
	return nsMS(float64(ns))
}

func optMS(v metrics.Opt) string {
	if !v.OK {
		return ""
	}
	return nsMS(v.V)
}

// Records adapts a slice to the iterator CSV reads.
func Records(recs []record.Record) iter.Seq2[*record.Record, error] {
	return func(yield func(*record.Record, error) bool) {
		for i := range recs {
			if !yield(&recs[i], nil) {
				return
			}
		}
	}
}

// renderCSV is the csv format: CSV over the input's records, streaming.
func renderCSV(w io.Writer, ins []Input) error {
	recs, err := ins[0].records("csv")
	if err != nil {
		return err
	}
	return CSV(w, ins[0].Header, recs)
}
