package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"servebench/metrics"
	"servebench/record"
)

// object is a JSON object that keeps its keys in insertion order, so that our JSON reads in
// the same order as vLLM's and golden files are stable.
type object struct {
	keys []string
	vals []any
}

func (o *object) set(k string, v any) { o.keys = append(o.keys, k); o.vals = append(o.vals, v) }

// fields are the object's keys and values, in order.
func (o *object) fields() []Field {
	out := make([]Field, len(o.keys))
	for i, k := range o.keys {
		out[i] = Field{k, o.vals[i]}
	}
	return out
}

// MarshalJSON writes the object with its keys in insertion order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalFinite(o.vals[i]) // finite.go: NaN and ±Inf are null
		if err != nil {
			return nil, fmt.Errorf("json key %s: %w", k, err)
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// JSON writes the summary as one indented JSON object whose keys follow vLLM's
// `vllm bench serve --save-result` names where vLLM has the figure (completed, duration,
// mean_ttft_ms, p99_itl_ms, ...), and the same pattern for our extra figures
// (mean_ttft_first_event_ms, p99_itl_token_ms, mean_decode_rate_tok_s, ...).
// Undefined figures are null, never 0. h may be nil.
//
// The load keys are vLLM's too: num_prompts, request_rate ("inf" for a closed loop, which
// vLLM runs as an infinite rate capped at max_concurrency), burstiness and max_concurrency.
func JSON(w io.Writer, h *record.Header, s *metrics.Summary) error {
	o := &object{}
	jsonDocument(o, SummaryDocument(h, s)) // document.go
	return writeIndented(w, o)
}

// JSONRuns writes the runs of one records file. One run is written exactly as JSON writes
// it, with no "runs" key, so a one-run file reads as it always did. Several runs (--repeat,
// sweep points) are one object whose top-level keys are the last run's, as JSON writes it,
// so that a reader of one-run files still finds every key; "summary_run" says which run that
// is, and "runs" holds every run in file order, each with its run index, label, load and
// summary keys (the header's keys are not repeated); a sweep's file adds its points and
// conclusions (sweepSections), one run or several. The last run, not the pooled runs, is
// at the top: pooling would count the gaps between runs in the window and mix different loads.
func JSONRuns(w io.Writer, h *record.Header, runs []metrics.RunSummary) error {
	if len(runs) == 0 {
		return fmt.Errorf("json: no run")
	}
	last := runs[len(runs)-1]
	if len(runs) == 1 && !isSweep(h) {
		return JSON(w, h, last.Summary)
	}
	o := &object{}
	jsonDocument(o, SummaryDocument(h, last.Summary))
	o.set("summary_run", last.Run)
	list := make([]*object, len(runs))
	for i, r := range runs {
		ro := &object{}
		ro.set("run", r.Run)
		ro.set("label", r.Label)
		jsonDocument(ro, SummaryDocument(h, r.Summary).Without("header")) // the header's keys are the file's
		list[i] = ro
	}
	o.set("runs", list)
	if isSweep(h) {
		jsonDocument(o, &Document{Sections: sweepSections(h, runs)}) // sweep.go
	}
	return writeIndented(w, o)
}

func writeIndented(w io.Writer, v any) error {
	b, err := marshalFinite(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// statKeys writes the keys of one distribution; every value is null for an empty set.
// Times are rounded to whole nanoseconds (the resolution of the records) before the
// conversion to ms, so 99 ms prints as 99, not 99.00000000000001.
func statKeys(o *object, base, unit string, st metrics.Stat, ps []float64, div float64) {
	v := func(x float64) *float64 {
		if !st.Valid() {
			return nil
		}
		if div == 1e6 {
			x = math.Round(x)
		}
		return ptr(x / div)
	}
	o.set("count_"+base, st.N)
	name := base + unit
	o.set("mean_"+name, v(st.Mean))
	o.set("median_"+name, v(st.Median))
	o.set("std_"+name, v(st.Std))
	for _, p := range ps {
		x, _ := st.Percentile(p)
		o.set("p"+pctName(p)+"_"+name, v(x))
	}
	o.set("min_"+name, v(st.Min))
	o.set("max_"+name, v(st.Max))
}

// sloObject writes the set objectives in ms (null when unset).
func sloObject(slo metrics.SLO) *object {
	o := &object{}
	for _, e := range []struct {
		k string
		v int64
	}{{"ttft_ms", int64(slo.TTFT)}, {"tpot_ms", int64(slo.TPOT)}, {"itl_ms", int64(slo.ITL)}, {"e2el_ms", int64(slo.E2E)}} {
		var v *float64
		if e.v > 0 {
			v = ptr(float64(e.v) / 1e6)
		}
		o.set(e.k, v)
	}
	if slo.TTFO > 0 { // only when set, so a summary without reasoning keeps its keys
		o.set("ttfo_ms", float64(slo.TTFO)/1e6)
	}
	return o
}

func meanOrNil(st metrics.Stat) *float64 {
	if !st.Valid() {
		return nil
	}
	return ptr(st.Mean)
}

// pctName formats a percentile as vLLM does: 99 → "99", 99.9 → "99.9".
func pctName(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }

func ptr[T any](v T) *T { return &v }

// pct converts a share to percent, keeping nil (undefined) as nil.
func pct(v *float64) *float64 {
	if v == nil {
		return nil
	}
	p := 100 * *v
	return &p
}

// renderJSON is the json format: JSONRuns of the input's runs, as `run --json` writes them
// (run hands its summaries to the same function, so the two agree).
func renderJSON(w io.Writer, ins []Input) error {
	runs, err := ins[0].summaries("json")
	if err != nil {
		return err
	}
	return JSONRuns(w, ins[0].Header, runs)
}

// splitJSON is TTFT taken apart (metrics.TTFTSplit) with the keys of every distribution, or
// null where no server reported its prefill times.
func splitJSON(s *metrics.Summary) *object {
	sp := s.TTFTSplit
	if sp == nil {
		return nil
	}
	o := &object{}
	o.set("prefill_source", sp.Source)
	o.set("requests", sp.Requests)
	o.set("of", sp.Of)
	statKeys(o, "to_headers", "_ms", sp.ToHeaders, s.Percentiles, 1e6)
	statKeys(o, "prefill", "_ms", sp.Prefill, s.Percentiles, 1e6)
	statKeys(o, "rest", "_ms", sp.Rest, s.Percentiles, 1e6)
	o.set("overlap_requests", sp.Overlap)
	o.set("max_overlap_ms", sp.OverlapMax/1e6)
	return o
}
