package sim

import (
	"fmt"
	"math"
	"time"
)

// model is the engine's cost model, derived once from the Config: the figures the roofline
// and the scheduler need, with overrides applied and TP folded in.
type model struct {
	spec            ModelSpec
	hw              HardwareSpec
	tp              int
	dtypeBytes      float64
	weightBytes     float64 // params · dtype_bytes, whole model
	kvBytesPerToken float64 // 2 (K and V) · layers · kv_heads · head_dim · dtype_bytes
	kvCapacity      int     // tokens the KV cache holds
	blockSize       int     // tokens per KV-cache block: the prefix cache hashes and reuses whole blocks
	maxModelLen     int
	overhead        time.Duration
	flopsPerSec     float64 // achieved FLOP/s of the TP group (peak · efficiency · tp)
	bytesPerSec     float64 // achieved bytes/s of the TP group
}

const (
	gib = 1 << 30
	// activationReserve is device memory per GPU kept for activations and CUDA graphs before
	// the KV cache is sized, as vLLM's memory profiling does (it is ~1-2 GiB for 7-8B models).
	activationReserve = 1.5 * gib
	// allreduceLatency and allreduceBytesPerSec model the two all-reduces per layer of
	// tensor parallelism: a fixed latency each (~8 µs for small NCCL messages over NVLink)
	// plus the ring's 2(tp−1)/tp of the activations over an effective ~300 GB/s link.
	allreduceLatency     = 8 * time.Microsecond
	allreduceBytesPerSec = 300e9
)

// newModel applies the overrides to the presets and sizes the KV cache.
func newModel(c *Config) (*model, error) {
	spec, hw := modelPresets[c.ModelPreset], hardwarePresets[c.Hardware]
	spec.Params = pickF(c.Params, spec.Params)
	spec.Layers = pickI(c.Layers, spec.Layers)
	spec.KVHeads = pickI(c.KVHeads, spec.KVHeads)
	spec.HeadDim = pickI(c.HeadDim, spec.HeadDim)
	spec.Hidden = pickI(c.Hidden, spec.Hidden)
	spec.MaxModelLen = pickI(c.MaxModelLen, spec.MaxModelLen)
	hw.BandwidthTB = pickF(c.BandwidthTB, hw.BandwidthTB)
	hw.TFLOPs = pickF(c.TFLOPs, hw.TFLOPs)
	hw.MemoryGB = pickF(c.MemoryGB, hw.MemoryGB)
	m := &model{
		spec: spec, hw: hw, tp: c.TP, dtypeBytes: pickF(c.DTypeBytes, 2),
		maxModelLen: spec.MaxModelLen, overhead: c.StepOverhead, blockSize: pickI(c.BlockSize, DefaultBlockSize),
		flopsPerSec: hw.TFLOPs * 1e12 * c.FlopsEfficiency * float64(c.TP),
		bytesPerSec: hw.BandwidthTB * 1e12 * c.BWEfficiency * float64(c.TP),
	}
	m.weightBytes = spec.Params * m.dtypeBytes
	m.kvBytesPerToken = 2 * float64(spec.Layers*spec.KVHeads*spec.HeadDim) * m.dtypeBytes
	m.kvCapacity = c.KVCacheTokens
	if m.kvCapacity == 0 {
		// Datasheet "80GB" is 80 GiB of HBM; vLLM takes gpu_memory_utilization of it,
		// subtracts the weights and the activation peak, and gives the rest to the KV cache.
		free := float64(c.TP)*(hw.MemoryGB*gib*c.GPUMemoryUtilization-activationReserve) - m.weightBytes
		if free < m.kvBytesPerToken*float64(min(spec.MaxModelLen, 4096)) {
			return nil, fmt.Errorf("--model-preset %s needs %.1f GB of weights: it does not fit on --tp %d × --hardware %s (%.0f GB each); raise --tp or set --kv-cache-tokens",
				c.ModelPreset, m.weightBytes/1e9, c.TP, c.Hardware, hw.MemoryGB)
		}
		m.kvCapacity = int(free / m.kvBytesPerToken)
	}
	return m, nil
}

func pickF(override, preset float64) float64 {
	if override != 0 {
		return override
	}
	return preset
}

func pickI(override, preset int) int {
	if override != 0 {
		return override
	}
	return preset
}

// stepWork is the work of one engine step: the tokens computed, the attention context they
// attend over, and the KV-cache tokens read.
type stepWork struct {
	tokens   int     // new tokens computed this step (prefill chunks + decodes)
	attended float64 // Σ over new tokens of the context each attends to
	kvRead   float64 // Σ over sequences of their context length (KV read once per step)
}

// add accounts for n new tokens of a sequence that already has ctx tokens in its KV cache.
// Token i attends to ctx+i+1 positions, so the chunk attends n·ctx + n(n+1)/2 in total.
func (w *stepWork) add(ctx, n int) {
	w.tokens += n
	w.attended += float64(n)*float64(ctx) + float64(n)*float64(n+1)/2
	w.kvRead += float64(ctx + n)
}

// stepTime is the roofline of one step:
//
//	overhead + max(flops / achieved_flops, bytes / achieved_bandwidth) + tp_comm
//	flops = 2·params·tokens + 4·layers·hidden·attended   (GEMMs + QKᵀ and AV)
//	bytes = weight_bytes + kv_bytes_per_token·kv_read     (weights once, each context once)
//
// With tensor parallelism both terms are split over the TP group (folded into the achieved
// rates) and the two all-reduces per layer are added.
func (m *model) stepTime(w stepWork) time.Duration {
	if w.tokens == 0 {
		return 0
	}
	flops := 2*m.spec.Params*float64(w.tokens) + 4*float64(m.spec.Layers*m.spec.Hidden)*w.attended
	bytes := m.weightBytes + m.kvBytesPerToken*w.kvRead
	sec := math.Max(flops/m.flopsPerSec, bytes/m.bytesPerSec)
	return m.overhead + time.Duration(sec*1e9) + m.commTime(w.tokens)
}

// commTime is the tensor-parallel all-reduce cost of a step with the given token count.
func (m *model) commTime(tokens int) time.Duration {
	if m.tp <= 1 {
		return 0
	}
	ring := 2 * float64(m.tp-1) / float64(m.tp)
	perReduce := float64(allreduceLatency) + float64(tokens*m.spec.Hidden)*m.dtypeBytes*ring/allreduceBytesPerSec*1e9
	return time.Duration(2 * float64(m.spec.Layers) * perReduce)
}

// decodeStepTime is the step time of batch sequences each decoding one token with ctx
// tokens of context: the figure behind ITL at steady state.
func (m *model) decodeStepTime(batch, ctx int) time.Duration {
	var w stepWork
	for range batch {
		w.add(ctx, 1)
	}
	return m.stepTime(w)
}

// PrefillStep is the roofline's time of one engine step that prefills newTokens of a prompt
// whose first cachedTokens are already in the KV cache (a prefix-cache hit), alone in the
// batch: the engine's part of a lone request's TTFT when its new tokens fit one step's budget.
// Zero in fixed mode (no engine model). For checking measured figures against the model.
func (s *Server) PrefillStep(newTokens, cachedTokens int) time.Duration {
	if s.model == nil {
		return 0
	}
	var w stepWork
	w.add(cachedTokens, newTokens)
	return s.model.stepTime(w)
}
