package metrics

import (
	"slices"

	"servebench/record"
)

// AdapterSummary is one LoRA adapter's share of a run (--lora-modules): its measured
// requests (Record.Adapter) and their figures, defined as the run's are. Throughputs divide
// by the run's whole window, which every adapter's requests share, so the adapters'
// throughputs add up to the run's.
type AdapterSummary struct {
	Adapter   string `json:"adapter"`
	Measured  int    `json:"measured"`
	Completed int    `json:"completed"`
	Failed    int    `json:"failed"`
	// Share is the adapter's share of the run's measured requests.
	Share            float64  `json:"share"`
	InputTokens      int64    `json:"total_input_tokens"`
	OutputTokens     int64    `json:"total_output_tokens"`
	RequestRate      *float64 `json:"request_throughput"`
	OutputThroughput *float64 `json:"output_throughput"`
	TTFT             Stat     `json:"ttft_ns"`
	TPOT             Stat     `json:"tpot_ns"`
	ITL              Stat     `json:"itl_ns"` // ITL (chunk): the gaps between its requests' content events
	E2E              Stat     `json:"e2el_ns"`
}

type adapterRun struct {
	measured, completed, failed int
	in, out                     int64
	ttft, tpot, itl, e2e        sample
}

// adapterAcc accumulates the per-adapter figures; empty for a run without adapters.
type adapterAcc struct {
	by map[string]*adapterRun
}

// add takes one measured request (warmup and cooldown never get here). A run of which no
// request names an adapter keeps nothing.
func (a *adapterAcc) add(r *record.Record) {
	if r.Adapter == "" {
		return
	}
	if a.by == nil {
		a.by = map[string]*adapterRun{}
	}
	x := a.by[r.Adapter]
	if x == nil {
		x = &adapterRun{}
		a.by[r.Adapter] = x
	}
	x.measured++
	if !r.OK() {
		x.failed++
		return
	}
	x.completed++
	out, _ := outputTokens(r)
	in, _ := promptTokens(r)
	x.in, x.out = x.in+int64(in), x.out+int64(out)
	addNS(&x.ttft, ttft, r)
	addNS(&x.e2e, e2eLatency, r)
	if v, ok := tpotNS(r, out); ok {
		x.tpot.add(v)
	}
	for i := 1; i < len(r.Events); i++ {
		x.itl.add(float64(r.Events[i].T - r.Events[i-1].T))
	}
}

// summaries are the adapters in name order; window is the run's in seconds (0: none).
func (a *adapterAcc) summaries(ps []float64, measured int, window float64) []AdapterSummary {
	if a.by == nil {
		return nil
	}
	names := make([]string, 0, len(a.by))
	for k := range a.by {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make([]AdapterSummary, 0, len(names))
	for _, k := range names {
		x := a.by[k]
		s := AdapterSummary{Adapter: k, Measured: x.measured, Completed: x.completed, Failed: x.failed,
			InputTokens: x.in, OutputTokens: x.out,
			TTFT: x.ttft.stat(ps), TPOT: x.tpot.stat(ps), ITL: x.itl.stat(ps), E2E: x.e2e.stat(ps)}
		if measured > 0 {
			s.Share = float64(x.measured) / float64(measured)
		}
		if window > 0 {
			s.RequestRate = ptr(float64(x.completed) / window)
			s.OutputThroughput = ptr(float64(x.out) / window)
		}
		out = append(out, s)
	}
	return out
}
