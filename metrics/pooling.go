package metrics

import (
	"servebench/record"
)

// Pooling is the summary of a run against a non-generating API: embeddings (each request a
// batch of texts, answered with one vector each) or rerank (a query and documents,
// answered with a score each). Nothing streams, so TTFT, ITL, TPOT and decode rate do not
// exist for such a run; its figures are these.
//
//   - Latency = done − sent: from the request's last byte written to the answer's last byte
//     read (stamped before the answer is decoded). LatencyFromDispatch = done − dispatched,
//     what a client library's timer would show (connection set-up and client delays in).
//   - RequestThroughput = completed / window; InputThroughput = Σ prompt tokens / window
//     (the server's usage.prompt_tokens where it reported them); InputsPerSecond = Σ inputs
//     / window. The window is the run's (first sent → last done of measured requests).
//   - BatchSize is the distribution of inputs per completed request (embedding texts, or
//     rerank documents), PromptTokens that of prompt tokens per completed request.
//
// Failed requests are in none of these, as everywhere (docs/design/METRICS.md).
type Pooling struct {
	Requests            int     `json:"completed"`
	Inputs              int64   `json:"total_inputs"`
	InputTokens         int64   `json:"total_input_tokens"`
	RequestThroughput   float64 `json:"request_throughput"`
	InputThroughput     float64 `json:"input_throughput"`
	InputsPerSecond     float64 `json:"inputs_per_second"`
	Latency             Stat    `json:"latency_ns"`
	LatencyFromDispatch Stat    `json:"latency_from_dispatch_ns"`
	BatchSize           Stat    `json:"batch_size"`
	PromptTokens        Stat    `json:"prompt_tokens"`
}

// PoolingAPIs are the --api names (record.Target.API) of the non-generating APIs: a run
// against one of them is summarised as a pooling run even when no request got as far as
// reporting its batch size.
var PoolingAPIs = []string{"openai-embeddings", "rerank"}

type poolAcc struct {
	seen                        bool // a record carried a batch size (record.Record.Inputs)
	s                           Pooling
	lat, latDispatch, batch, pt sample
}

// note marks the run as pooling when any record, warmup or failed included, carried a
// batch size.
func (a *poolAcc) note(r *record.Record) { a.seen = a.seen || r.Inputs > 0 }

// add takes one completed measured request.
func (a *poolAcc) add(r *record.Record) {
	if r.Inputs <= 0 {
		return
	}
	in, _ := promptTokens(r)
	a.s.Requests++
	a.s.Inputs += int64(r.Inputs)
	a.s.InputTokens += int64(in)
	a.batch.add(float64(r.Inputs))
	a.pt.add(float64(in))
	if r.Done > 0 && r.Sent > 0 {
		a.lat.add(float64(r.Done - r.Sent))
	}
	if r.Done > 0 && r.Dispatched > 0 {
		a.latDispatch.add(float64(r.Done - r.Dispatched))
	}
}

// summary is nil for a run that is not a pooling run (hdrAPI: the header's API, "" for none).
func (a *poolAcc) summary(ps []float64, hdrAPI string, window float64) *Pooling {
	pooling := a.seen
	for _, n := range PoolingAPIs {
		pooling = pooling || hdrAPI == n
	}
	if !pooling {
		return nil
	}
	s := a.s
	if window > 0 {
		s.RequestThroughput = float64(s.Requests) / window
		s.InputThroughput = float64(s.InputTokens) / window
		s.InputsPerSecond = float64(s.Inputs) / window
	}
	s.Latency = a.lat.stat(ps)
	s.LatencyFromDispatch = a.latDispatch.stat(ps)
	s.BatchSize = a.batch.stat(ps)
	s.PromptTokens = a.pt.stat(ps)
	return &s
}

// pooling is the run's pooling summary (nil for a generating run).
func (a *Accumulator) pooling(s *Summary) *Pooling {
	api := ""
	if a.hdr != nil {
		api = a.hdr.Target.API
	}
	return a.pool.summary(a.opt.percentiles(), api, s.Window.Seconds())
}

// Streams reports whether the run streamed output. A pooling run (embeddings, rerank) did
// not: it has no TTFT, ITL, TPOT or steady-state check, and the warnings that speak of a
// request's first figure speak of its latency instead (firstFigure).
func (s *Summary) Streams() bool { return s.Pooling == nil }

// firstFigure is the figure a request's server time is read in, and its distribution: TTFT
// (sent → first token) for a streamed run, the latency (sent → done) for a pooling run.
func (s *Summary) firstFigure() (string, Stat) {
	if s.Pooling != nil {
		return "latency", s.Pooling.Latency
	}
	return "TTFT", s.TTFT
}
