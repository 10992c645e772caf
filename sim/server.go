// Package sim is servebench's built-in simulated LLM inference server: an OpenAI-compatible
// HTTP API (completions and chat, streaming and not, vLLM's extensions) in front of a model
// of a continuous-batching engine whose step times come from a roofline of model size
// against hardware bandwidth and compute. It is the default target of `servebench run`, the
// ground truth for accuracy tests (it reports when every event's bytes left it), and a fault
// injector. It uses the standard library only and shares no parsing code with package client.
//
// Everything it serves says it is a simulator: /v1/models owned_by, /version, the
// servebench_sim_info metric, and Describe's "simulated" key.
package sim

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Version is reported by /version.
const Version = "servebench-sim/1"

// TruthEvent is the ground truth of one event: when its bytes were written and flushed to
// the connection, and when that write began. Kind is one of role, content, reasoning (a chunk with reasoning text and no
// answer text, reasoning.go), empty (a chunk without text, from the
// hidden_tokens fault: not a content event), abort (a chunk with finish_reason "abort"),
// malformed, error, usage, done (streams), response (a non-streaming body) or http_error (a
// fault status before any streaming); lifecycle is a Responses API event without text.
type TruthEvent struct {
	RequestID string
	Seq       int // index of the event within its request, from 0
	// Tokens is the generated tokens the event carries: a content event also carries those
	// of the empty chunks just before it, as servebench attributes them, so a request's
	// content events add up to its output.
	Tokens int
	// Written is the clock read right after the event's bytes were written and flushed;
	// WriteBegan the clock read right before they were written. The two bracket the moment
	// the bytes left: a client's receive stamp of them lies between the two. Written alone
	// is not enough under load: the write wakes the reader, which may run first while the
	// simulator waits for a CPU, so Written can land milliseconds after the client read.
	Written, WriteBegan time.Time
	Kind                string

	// CachedTokens is the request's prompt tokens found in the prefix cache, carried by its
	// first content event and its response event while the prefix cache is on (0 on the
	// others, and with the cache off).
	CachedTokens int
	hasCached    bool // CachedTokens is carried: the truth log writes it, a 0 included
}

// Server is a simulated inference server. Create it with New; serve it with Start or mount
// Handler; stop it with Close.
type Server struct {
	cfg       Config
	model     *model // nil in fixed mode
	modelName string
	describe  map[string]string
	eng       *engine
	stats     *simStats
	tok       *tokenizer
	faults    *faultDrawer
	created   int64 // unix seconds stamped on responses
	nextID    atomic.Uint64
	hook      atomic.Pointer[func(TruthEvent)]
	truthLog  *truthLog
	mux       *http.ServeMux
	dcgm      dcgmState // the simulated GPUs' power model (/dcgm/metrics)
	answers   answerKey // --answers: the answer key by prompt (answers.go)

	mu     sync.Mutex
	srv    *http.Server
	closed bool
}

// New validates c, builds the engine and starts its goroutine. Call Close to stop it.
func New(c Config) (*Server, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: c, tok: newTokenizer(), created: time.Now().Unix(),
		faults: &faultDrawer{seed: uint64(c.Seed), rate: c.FaultRate, list: c.Faults}}
	kvCap := 0
	if !c.FixedMode() {
		m, err := newModel(&c)
		if err != nil {
			return nil, err
		}
		s.model, kvCap = m, m.kvCapacity
	}
	var err error
	if s.answers, err = loadAnswerKey(c.AnswersFile); err != nil {
		return nil, err
	}
	s.modelName = c.ServedModelName
	if s.modelName == "" {
		s.modelName = modelPresets[c.ModelPreset].Name
	}
	if c.TruthFile != "" {
		tl, err := openTruthLog(c.TruthFile)
		if err != nil {
			return nil, err
		}
		s.truthLog = tl
	}
	s.stats = newSimStats(kvCap, s.maxModelLen(), c.HistogramBuckets == "fine")
	s.describe = s.buildDescribe()
	s.eng = newEngine(&s.cfg, s.model, s.stats)
	s.eng.truth = s.truthLog
	if c.OTLPTracesEndpoint != "" {
		u, err := tracesURL(c.OTLPTracesEndpoint)
		if err != nil {
			return nil, err
		}
		s.eng.spans = newSpanExporter(u, s.modelName)
	}
	s.eng.start()
	s.mux = s.routes()
	return s, nil
}

// Handler is the HTTP API, for mounting in a test server or another mux.
func (s *Server) Handler() http.Handler { return s.mux }

// Start listens on addr (c.Addr when empty; "127.0.0.1:0" picks a free port) and serves in
// the background. It returns the base URL, e.g. http://127.0.0.1:PORT (no /v1).
func (s *Server) Start(addr string) (string, error) {
	if addr == "" {
		addr = s.cfg.Addr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.srv != nil {
		return "", errors.New("sim: server already started or closed")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listen %s: %w", addr, err)
	}
	s.srv = &http.Server{Handler: s.mux, ReadHeaderTimeout: 30 * time.Second}
	if s.truthLog != nil { // the truth log records when each request's first bytes were read
		ln = readListener{ln}
		s.srv.Handler, s.srv.ConnContext = nextRequest(s.mux), withReadConn
	}
	go s.srv.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed after Close
	return "http://" + ln.Addr().String(), nil
}

// Close stops the listener and every connection, stops the engine and finishes the truth
// log. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	srv := s.srv
	s.mu.Unlock()
	var errs []error
	if srv != nil {
		errs = append(errs, srv.Close())
	}
	s.eng.close()
	if s.eng.spans != nil { // after the engine: no span comes after this
		s.eng.spans.close()
	}
	if s.truthLog != nil {
		errs = append(errs, s.truthLog.close())
	}
	return errors.Join(errs...)
}

// SetTruth installs an in-process ground-truth hook, called after each event's bytes are
// written and flushed. It is called from many handler goroutines at once: fn must be safe
// for concurrent use and quick. nil removes the hook.
func (s *Server) SetTruth(fn func(TruthEvent)) {
	if fn == nil {
		s.hook.Store(nil)
		return
	}
	s.hook.Store(&fn)
}

// truth reports events written in one write to the hook and the truth log: began is the
// clock read before the write, at the one after it (and its flush).
func (s *Server) truth(evs []TruthEvent, began, at time.Time) {
	hook := s.hook.Load()
	if hook == nil && s.truthLog == nil {
		return
	}
	for i := range evs {
		evs[i].Written, evs[i].WriteBegan = at, began
	}
	if hook != nil {
		for _, ev := range evs {
			(*hook)(ev)
		}
	}
	if s.truthLog != nil {
		s.truthLog.write(evs)
	}
}

// Describe returns the configuration as condition key/values, always with "simulated":
// "true" so that no result from the simulator passes for a real server's.
func (s *Server) Describe() map[string]string {
	out := make(map[string]string, len(s.describe))
	for k, v := range s.describe {
		out[k] = v
	}
	return out
}

// Lag reports how far the engine woke after its own schedule (p50/p99 over the most recent
// 65,536 steps or releases, max over all). Large values mean the machine could not keep up
// and the simulated timings are late.
func (s *Server) Lag() LagStats { return s.eng.lag.stats() }

func (s *Server) buildDescribe() map[string]string {
	c := &s.cfg
	d := map[string]string{
		"simulated": "true", "server": Version, "model": s.modelName, "model_preset": c.ModelPreset,
		"seed": strconv.FormatInt(c.Seed, 10), "fault_rate": ftoa(c.FaultRate), "faults": c.Faults.String(),
		"media_rule": mediaRuleOf(c.ModelPreset).Name,
	}
	c.describeSpec(d)
	c.describeLoRA(d)
	c.describeReasoning(d)
	if c.FixedMode() {
		d["mode"] = "fixed"
		d["ttft"], d["itl"], d["jitter"] = c.TTFT.String(), c.ITL.String(), c.Jitter.String()
		return d
	}
	m := s.model
	d["mode"] = "roofline"
	for k, v := range map[string]string{
		"hardware": c.Hardware, "gpu": m.hw.Name, "tp": strconv.Itoa(c.TP), "dtype": dtypeName(m.dtypeBytes),
		"dtype_bytes": ftoa(m.dtypeBytes), "params": ftoa(m.spec.Params), "layers": strconv.Itoa(m.spec.Layers),
		"kv_heads": strconv.Itoa(m.spec.KVHeads), "head_dim": strconv.Itoa(m.spec.HeadDim), "hidden": strconv.Itoa(m.spec.Hidden),
		"bandwidth_tb_s": ftoa(m.hw.BandwidthTB), "tflops": ftoa(m.hw.TFLOPs), "memory_gb": ftoa(m.hw.MemoryGB),
		"max_num_seqs": strconv.Itoa(c.MaxNumSeqs), "max_num_batched_tokens": strconv.Itoa(c.MaxNumBatchedTokens),
		"kv_cache_tokens": strconv.Itoa(m.kvCapacity), "max_model_len": strconv.Itoa(m.maxModelLen),
		"gpu_memory_utilization": ftoa(c.GPUMemoryUtilization), "step_overhead": c.StepOverhead.String(),
		"bw_efficiency": ftoa(c.BWEfficiency), "flops_efficiency": ftoa(c.FlopsEfficiency),
		"prefix_cache": strconv.FormatBool(!c.NoPrefixCache), "block_size": strconv.Itoa(m.blockSize),
	} {
		d[k] = v
	}
	c.describeStartup(d)
	return d
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func dtypeName(b float64) string {
	switch b {
	case 2:
		return "bfloat16"
	case 1:
		return "fp8"
	case 4:
		return "float32"
	case 0.5:
		return "int4"
	}
	return ftoa(b) + "-byte"
}

// maxModelLen is the longest prompt+output accepted.
func (s *Server) maxModelLen() int {
	if s.model != nil {
		return s.model.maxModelLen
	}
	if s.cfg.MaxModelLen > 0 {
		return s.cfg.MaxModelLen
	}
	return modelPresets[s.cfg.ModelPreset].MaxModelLen
}
