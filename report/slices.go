package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"servebench/metrics"
)

// The slices-csv and slices-json formats cut each run into time slices of Input.Slice width
// (report --slice; 10 s by default) and give per slice what the HTML charts draw: requests
// sent, completed and failed, output tokens/s from the events that arrived in it, mean
// requests in flight, and TTFT and ITL (chunk) percentiles. Every request counts, warmup
// included (warmup_completed says how much of a slice it was). docs/csv.md documents the
// columns.

// DefaultSlice is the slice width when Input.Slice is zero.
const DefaultSlice = 10 * time.Second

// maxSlices bounds the slices of one rendering: a width far too small for the run is an error,
// not a file of millions of rows.
const maxSlices = 1_000_000

// slicePcts are the percentiles of TTFT and ITL per slice.
var slicePcts = []float64{50, 90, 99}

// SliceColumns are the columns of slices-csv, in order.
func SliceColumns() []string {
	cols := []string{"run", "start_s", "end_s", "sent", "completed", "failed", "warmup_completed",
		"request_throughput", "output_tokens", "output_throughput", "mean_in_flight", "count_ttft"}
	for _, p := range slicePcts {
		cols = append(cols, "p"+pctName(p)+"_ttft_ms")
	}
	cols = append(cols, "count_itl")
	for _, p := range slicePcts {
		cols = append(cols, "p"+pctName(p)+"_itl_ms")
	}
	return cols
}

// timeSlices reads the input's records into slices of its width.
func timeSlices(in Input, format string) ([]metrics.Slice, time.Duration, error) {
	w := in.Slice
	if w <= 0 {
		w = DefaultSlice
	}
	recs, err := in.records(format)
	if err != nil {
		return nil, 0, err
	}
	sl := metrics.NewSlices(w, slicePcts)
	var first, last int64
	for r, err := range recs {
		if err != nil {
			return nil, 0, err
		}
		if r.Sent > 0 && (first == 0 || r.Sent < first) {
			first = r.Sent
		}
		last = max(last, r.Done)
		if first > 0 && (last-first)/int64(w) > maxSlices {
			return nil, 0, fmt.Errorf("%s: --slice %v cuts the run into more than %d slices: choose a wider slice", in.label(), w, maxSlices)
		}
		sl.Add(r)
	}
	return sl.Slices(), w, nil
}

func renderSlicesCSV(w io.Writer, ins []Input) error {
	ss, width, err := timeSlices(ins[0], "slices-csv")
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(SliceColumns()); err != nil {
		return err
	}
	for _, s := range ss {
		if err := cw.Write(sliceRow(s, width)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func sliceRow(s metrics.Slice, width time.Duration) []string {
	sec := width.Seconds()
	row := []string{strconv.Itoa(s.Run), csvFloat(float64(s.Start)/1e9, true), csvFloat(float64(s.End)/1e9, true),
		strconv.Itoa(s.Sent), strconv.Itoa(s.Completed), strconv.Itoa(s.Failed), strconv.Itoa(s.WarmupCompleted),
		csvFloat(float64(s.Completed)/sec, true), strconv.FormatInt(s.OutputTokens, 10),
		csvFloat(float64(s.OutputTokens)/sec, true), csvFloat(s.InFlight, true), strconv.Itoa(s.TTFT.N)}
	for _, p := range slicePcts {
		v, ok := s.TTFT.Percentile(p)
		row = append(row, csvFloat(v/1e6, ok))
	}
	row = append(row, strconv.Itoa(s.ITL.N))
	for _, p := range slicePcts {
		v, ok := s.ITL.Percentile(p)
		row = append(row, csvFloat(v/1e6, ok))
	}
	return row
}

func renderSlicesJSON(w io.Writer, ins []Input) error {
	ss, width, err := timeSlices(ins[0], "slices-json")
	if err != nil {
		return err
	}
	o := &object{}
	o.set("slice_s", width.Seconds())
	rows := make([]*object, len(ss))
	cols := SliceColumns()
	for i, s := range ss {
		ro := &object{}
		for j, cell := range sliceRow(s, width) {
			ro.set(cols[j], jsonCell(cell))
		}
		rows[i] = ro
	}
	o.set("slices", rows)
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// jsonCell is a CSV cell as a JSON value: a number, or null for an empty (undefined) one.
func jsonCell(cell string) any {
	if cell == "" {
		return nil
	}
	return json.Number(cell)
}
