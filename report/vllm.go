package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"servebench/metrics"
	"servebench/record"
)

// The vllm format writes what `vllm bench serve --save-result --save-detailed` writes
// (vllm/benchmarks/serve.py), so that a script written against vLLM's result files loads ours
// unchanged: the same keys in the same order, with the same JSON types and units (ms for the
// distribution keys, seconds in the per-request arrays), one object per line as vLLM's
// --append-result writes several results. Where servebench differs from vLLM, it follows
// vLLM's shape and says so in servebench_notes; servebench's own keys all start with
// "servebench_".
//
// vLLM's rules that are followed here, not servebench's:
//   - an empty distribution is 0, not null (numpy's mean of [0]); servebench_count_X says
//     whether X had any value;
//   - per-request arrays hold every measured request in request (schedule) order, failed ones
//     included: output length 0 and latency 0, with the TTFT and ITLs the stream delivered
//     before it failed (what vLLM's request functions keep), and the error in errors ("" for
//     success);
//   - request_goodput is null without an SLO, as vLLM's without --goodput;
//   - a floating-point figure is always written with a decimal point (0.0, not 0), so that
//     Python loads a float where vLLM wrote one.

// vllmReq is one measured request, as the per-request arrays hold it.
type vllmReq struct {
	id        int
	scheduled int64
	inputLen  int
	outputLen int
	ttft      float64   // s
	itls      []float64 // s
	latency   float64   // s
	start     float64   // s since the file's t0
	queue     float64   // s
	tpot      float64   // s; 0 when undefined (one output token, a failure), as vLLM's empty figures
	err       string
	ok        bool
}

// vllmRequest converts one record (measured, not cancelled) to vLLM's per-request values.
func vllmRequest(r *record.Record) vllmReq {
	m := metrics.PerRequest(r)
	q := vllmReq{id: r.ID, scheduled: r.Scheduled, inputLen: m.PromptTokens, ok: r.OK(), itls: []float64{}}
	if m.TTFT.OK {
		q.ttft = m.TTFT.V / 1e9
	}
	for i := 1; i < len(r.Events); i++ {
		q.itls = append(q.itls, float64(r.Events[i].T-r.Events[i-1].T)/1e9)
	}
	start := r.Sent // the clock every TTFT and latency here starts on
	if start == 0 {
		start = r.Dispatched
	}
	q.start = float64(start) / 1e9
	if m.Queue.OK {
		q.queue = m.Queue.V / 1e9
	}
	if q.ok {
		q.outputLen = m.OutputTokens
		if m.E2E.OK {
			q.latency = m.E2E.V / 1e9
		}
		if m.TPOT.OK {
			q.tpot = m.TPOT.V / 1e9
		}
		return q
	}
	q.err = r.ErrorClass
	if r.Error != "" {
		q.err += ": " + r.Error
	}
	return q
}

// writeVLLM writes one line of vLLM's result JSON per run of the records: runs are the runs'
// summaries, reqs each run's measured requests (keyed by Record.Run).
func writeVLLM(w io.Writer, h *record.Header, runs []metrics.RunSummary, reqs map[int][]vllmReq) error {
	if h == nil {
		h = &record.Header{}
	}
	bw := bufio.NewWriter(w)
	for _, r := range runs {
		rs := reqs[r.Run]
		slices.SortStableFunc(rs, func(a, b vllmReq) int {
			return cmp.Or(cmp.Compare(a.scheduled, b.scheduled), cmp.Compare(a.id, b.id))
		})
		b, err := marshalFinite(vllmObject(h, r, rs)) // finite.go: NaN and ±Inf are null
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// vllmObject is one run's result, in vLLM's key order: setup, traffic, run figures,
// per-request arrays, peaks, distributions; then servebench's keys.
func vllmObject(h *record.Header, r metrics.RunSummary, rs []vllmReq) *object {
	s := r.Summary
	l := loadOf(h, summaryEnd(s))
	o := &object{}
	date := ""
	if !h.Start.IsZero() {
		date = h.Start.UTC().Format("20060102-150405")
	}
	backend := vllmBackend(h.Target.API)
	o.set("date", date)
	o.set("endpoint_type", backend) // vLLM writes both, for backward compatibility
	o.set("backend", backend)
	o.set("label", vllmLabel(h, r))
	o.set("model_id", h.Target.Model)
	o.set("tokenizer_id", tokenizerID(h))
	o.set("num_prompts", l.numPrompts(s))
	o.set("request_rate", pyNum(l.vllmRequestRate()))
	o.set("burstiness", pyNum(l.vllmBurstiness()))
	o.set("max_concurrency", l.vllmMaxConcurrency())

	o.set("duration", pyFloat(s.Window.Seconds()))
	o.set("completed", s.Completed)
	o.set("failed", s.Failed)
	o.set("total_input_tokens", s.InputTokens)
	o.set("total_output_tokens", s.OutputTokens)
	o.set("request_throughput", orZero(s.RequestThroughput))
	var goodput any // null without SLOs, as vLLM's without --goodput
	if s.RequestGoodput != nil {
		goodput = pyFloat(*s.RequestGoodput)
	}
	o.set("request_goodput", goodput)
	o.set("output_throughput", orZero(s.OutputThroughput))
	o.set("total_token_throughput", orZero(s.TotalTokenThroughput))
	vllmArrays(o, rs)
	var peak pyFloat
	if s.PeakOutputTokensPerS != nil {
		peak = pyFloat(*s.PeakOutputTokensPerS)
	}
	o.set("max_output_tokens_per_s", peak)
	o.set("max_concurrent_requests", s.MaxInFlight)
	o.set("rtfx", pyFloat(0)) // audio input only
	vllmDistributions(o, s, l)
	vllmExtras(o, h, r, l)
	vllmOwnArrays(o, rs)
	return o
}

// vllmOwnArrays writes the per-request arrays vLLM's file lacks, beside its own and in the
// same order, under servebench_ keys so that vLLM's keys keep their meaning: each request's
// TPOT in seconds (0 where undefined, as vLLM writes an empty figure) and whether it
// succeeded (vLLM's own errors array says it by an empty string).
func vllmOwnArrays(o *object, rs []vllmReq) {
	tpots, ok := make([]any, len(rs)), make([]bool, len(rs))
	for i, q := range rs {
		tpots[i], ok[i] = pyFloat(q.tpot), q.ok
	}
	o.set("servebench_tpots", tpots)
	o.set("servebench_successes", ok)
}

// vllmArrays writes the per-request arrays of --save-detailed (and latencies, start_times and
// queue_times, which vLLM writes always).
func vllmArrays(o *object, rs []vllmReq) {
	col := func(f func(q vllmReq) any) []any {
		out := make([]any, len(rs))
		for i, q := range rs {
			out[i] = f(q)
		}
		return out
	}
	o.set("input_lens", col(func(q vllmReq) any { return q.inputLen }))
	o.set("output_lens", col(func(q vllmReq) any { return q.outputLen }))
	o.set("ttfts", col(func(q vllmReq) any { return pyFloat(q.ttft) }))
	o.set("itls", col(func(q vllmReq) any { return pyFloats(q.itls) }))
	o.set("latencies", col(func(q vllmReq) any { return pyFloat(q.latency) }))
	o.set("start_times", col(func(q vllmReq) any { return pyFloat(q.start) }))
	o.set("queue_times", col(func(q vllmReq) any { return pyFloat(q.queue) }))
	o.set("generated_texts", col(func(vllmReq) any { return "" }))
	o.set("errors", col(func(q vllmReq) any { return q.err }))
}

// namedStat is a distribution under its vLLM name.
type namedStat struct {
	name string
	st   metrics.Stat
}

// vllmStats are vLLM's four distributions, by its definitions' servebench counterparts.
func vllmStats(s *metrics.Summary) []namedStat {
	return []namedStat{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"itl", s.ITLChunk}, {"e2el", s.E2E}}
}

// vllmDistributions writes mean_, median_, std_ and p<N>_ of ttft, tpot, itl and e2el in ms,
// and, as vLLM does when max_concurrency is set, of the client queue time (and the latency
// including it, when the rate is finite).
func vllmDistributions(o *object, s *metrics.Summary, l runLoad) {
	dists := vllmStats(s)
	if l.vllmMaxConcurrency() != nil {
		dists = append(dists, namedStat{"client_queue_time", s.Queue})
		if l.rate > 0 {
			dists = append(dists, namedStat{"e2el_including_client_queue", s.E2EQueue})
		}
	}
	for _, d := range dists {
		vllmStatKeys(o, "", d.name, d.st, s.Percentiles)
	}
}

// vllmStatKeys writes one distribution in ms, as vLLM names it; 0 for an empty one.
func vllmStatKeys(o *object, prefix, name string, st metrics.Stat, ps []float64) {
	v := func(x float64) pyFloat {
		if !st.Valid() {
			return 0
		}
		return pyFloat(math.Round(x) / 1e6) // whole ns, as in the records
	}
	o.set(prefix+"mean_"+name+"_ms", v(st.Mean))
	o.set(prefix+"median_"+name+"_ms", v(st.Median))
	o.set(prefix+"std_"+name+"_ms", v(st.Std))
	for _, p := range ps {
		x, _ := st.Percentile(p)
		o.set(prefix+"p"+pctName(p)+"_"+name+"_ms", v(x))
	}
}

// vllmExtras writes servebench's keys: what the run was, the figures on vLLM's own clock and
// event rule, and the notes on where this file differs from vLLM's.
func vllmExtras(o *object, h *record.Header, r metrics.RunSummary, l runLoad) {
	s := r.Summary
	o.set("servebench_version", h.Version)
	o.set("servebench_api", h.Target.API)
	o.set("servebench_url", h.Target.URL)
	o.set("servebench_workload_hash", h.Workload.Hash)
	o.set("servebench_simulated", s.Simulated || h.Target.Simulated)
	o.set("servebench_run", r.Run)
	o.set("servebench_run_label", r.Label)
	o.set("servebench_cancelled", s.Cancelled)
	o.set("servebench_warmup_discarded", s.WarmupDiscarded)
	for _, d := range vllmStats(s) {
		o.set("servebench_count_"+d.name, d.st.N)
	}
	vllmStatKeys(o, "servebench_", "ttft_dispatch", s.TTFTDispatch, s.Percentiles)
	vllmStatKeys(o, "servebench_", "ttft_first_event", s.TTFTFirstEvent, s.Percentiles)
	warnings := metrics.Texts(s.Warnings) // plain strings beside vLLM's keys
	o.set("servebench_warnings", warnings)
	o.set("servebench_notes", vllmNotes(s, l))
}

// vllmNotes says, for a reader of this file who knows vLLM's, where it differs.
func vllmNotes(s *metrics.Summary, l runLoad) []string {
	notes := []string{
		"written by servebench report --format vllm from a records file, not by vllm bench serve",
		"generated_texts are empty strings: servebench does not keep the generated text",
		"ttfts, latencies and the ttft and e2el figures start when the request was completely sent; " +
			"vLLM's timer starts before its HTTP call: servebench_*_ttft_dispatch_ms is TTFT on that clock, " +
			"servebench_*_ttft_first_event_ms by vLLM's rule of counting a role-only chunk as the first token",
		"start_times are seconds since the records file's start (vLLM's are perf_counter readings): only their differences mean anything",
		"date is the run's start in UTC (vLLM writes the local time the file was saved)",
		"max_output_tokens_per_s counts tokens in 1 s buckets (vLLM counts streamed events); max_concurrent_requests is the exact peak of measured requests in flight, failed ones included (vLLM's counts successful ones)",
	}
	if !l.openLoop() && l.users > 0 {
		notes = append(notes, fmt.Sprintf("the load was %d closed-loop users, which vLLM runs as request_rate inf with max_concurrency %d", l.users, l.users))
	}
	if l.openLoop() && l.arrival == "constant" {
		notes = append(notes, `burstiness is "inf": arrivals were evenly spaced (vLLM would write Infinity, which is not JSON)`)
	}
	for _, d := range vllmStats(s) {
		if !d.st.Valid() {
			notes = append(notes, fmt.Sprintf("%s had no value: its figures are 0 as vLLM writes them, not measurements (servebench_count_%s is 0)", d.name, d.name))
		}
	}
	if s.Window <= 0 {
		notes = append(notes, "the run has no measurement window: duration and the throughputs are 0, not measurements")
	}
	if s.Failed > 0 {
		notes = append(notes, "failed requests are in the arrays with output length 0 and latency 0, and the TTFT and ITLs observed before they failed, as vLLM keeps them; errors gives the class and message. "+
			"A stream cut before its end marker is a failure here (truncated); vLLM counts it as a success")
	}
	if s.Cancelled > 0 {
		notes = append(notes, fmt.Sprintf("%d requests cancelled by servebench's own stop are in no array and no count", s.Cancelled))
	}
	return notes
}

// vllmBackend maps servebench's API names to vLLM's --backend names (its older
// benchmark_serving.py had the native ones); an API vLLM has no name for keeps servebench's.
func vllmBackend(api string) string {
	switch api {
	case "openai-completions":
		return "openai"
	case "openai-chat":
		return "openai-chat"
	case "tgi", "sglang":
		return api
	case "llamacpp":
		return "llama.cpp"
	case "triton":
		return "tensorrt-llm"
	}
	return api
}

// vllmLabel is vLLM's label (its --label, null when not given): the run's label in a file of
// several runs, else the header's.
func vllmLabel(h *record.Header, r metrics.RunSummary) any {
	if r.Label != "" {
		return r.Label
	}
	if h.Label != "" {
		return h.Label
	}
	return nil
}

// pyFloat is a float64 that JSON always writes with a decimal point or an exponent, as
// Python's json module writes a float, so that json.load gives a float where vLLM's file has
// one (encoding/json writes 0.0 as 0, which Python reads as an int).
type pyFloat float64

// MarshalJSON writes the shortest representation that reads back as the same float64.
func (f pyFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, fmt.Errorf("vllm: %v is not a JSON number", x)
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	for _, c := range b {
		if c == '.' || c == 'e' || c == 'E' {
			return b, nil
		}
	}
	return append(b, '.', '0'), nil
}

func pyFloats(xs []float64) []pyFloat {
	out := make([]pyFloat, len(xs))
	for i, x := range xs {
		out[i] = pyFloat(x)
	}
	return out
}

// pyNum makes a float64 a pyFloat and leaves anything else ("inf") as it is.
func pyNum(v any) any {
	if f, ok := v.(float64); ok {
		return pyFloat(f)
	}
	return v
}

func orZero(v *float64) pyFloat {
	if v == nil {
		return 0
	}
	return pyFloat(*v)
}

// renderVLLM is the vllm format: the records read once, into the runs' summaries and each
// run's per-request arrays (so it needs the records, not only summaries).
func renderVLLM(w io.Writer, ins []Input) error {
	in := ins[0]
	reqs := map[int][]vllmReq{}
	per, err := in.read("vllm", func(r *record.Record) {
		if r.Measured() && r.ErrorClass != record.ErrCancelled {
			reqs[r.Run] = append(reqs[r.Run], vllmRequest(r))
		}
	})
	if err != nil {
		return err
	}
	return writeVLLM(w, in.Header, per.Summaries(), reqs)
}
