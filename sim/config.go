package sim

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"strings"
	"time"
)

// Config holds every parameter of the simulator. Zero-valued model and hardware overrides
// mean "take the preset's figure". Fixed mode (TTFT or ITL set) bypasses the engine model.
type Config struct {
	Addr            string // listen address; loopback by default so a sim is never exposed by accident
	ModelPreset     string // one of ModelPresets()
	Hardware        string // one of HardwarePresets()
	ServedModelName string // the model id served and echoed; empty = the preset's Hugging Face id

	TP                   int     // tensor-parallel degree: per-GPU work is divided by it
	MaxNumSeqs           int     // running sequences per step (vLLM --max-num-seqs)
	MaxNumBatchedTokens  int     // tokens per step, the chunked-prefill budget (vLLM --max-num-batched-tokens)
	KVCacheTokens        int     // KV-cache capacity in tokens; 0 = derive from memory left after weights
	MaxModelLen          int     // longest prompt+output accepted; 0 = the preset's max_position_embeddings
	GPUMemoryUtilization float64 // share of device memory the engine may use (vLLM's default 0.9)
	BlockSize            int     // KV-cache block size in tokens, the prefix cache's unit; 0 = DefaultBlockSize
	NoPrefixCache        bool    // turn off the prefix cache (vLLM --no-enable-prefix-caching); fixed mode has none
	// DevMode serves vLLM's development endpoint POST /reset_prefix_cache, as vLLM does with
	// VLLM_SERVER_DEV_MODE=1 (without it the endpoint is not found, as in vLLM).
	DevMode bool

	StepOverhead    time.Duration // fixed CPU/launch cost of every engine step
	BWEfficiency    float64       // achieved share of peak memory bandwidth
	FlopsEfficiency float64       // achieved share of peak dense FLOPs

	// Model overrides (0 = preset).
	Params     float64 // parameter count, e.g. 8.03e9
	Layers     int
	KVHeads    int
	HeadDim    int
	Hidden     int
	DTypeBytes float64 // bytes per weight and KV element: 2 = bf16, 1 = fp8

	// Hardware overrides (0 = preset).
	BandwidthTB float64 // TB/s per GPU
	TFLOPs      float64 // dense TFLOPs per GPU
	MemoryGB    float64 // GB per GPU

	// Fixed mode: when TTFT or ITL is set, each request's first token comes TTFT after its
	// arrival and then one token (k for multi_token) every ITL, each jittered uniformly by
	// up to ±Jitter, with no model of batching.
	TTFT   time.Duration
	ITL    time.Duration
	Jitter time.Duration
	Seed   int64 // seeds EOS lengths, output words, jitter and fault draws

	// Start-up costs and drift (model mode only; 0 turns each off). The first ColdSteps
	// engine steps cost up to ColdFactor × their roofline time (fading linearly to 1 over them);
	// the first step of each batch shape
	// costs GraphCapture more, once; every step from ThrottleAfter after the first step on
	// costs ThrottleFactor ×. ColdStart fills the cold-start three left at 0 from the preset
	// profile (200 steps × 3, 30 ms per shape).
	ColdStart      bool
	ColdSteps      int
	ColdFactor     float64
	GraphCapture   time.Duration
	LazyCompile    time.Duration // lazycompile.go: one-off cost of each new batch-size or prefill-length bucket
	ThrottleAfter  time.Duration
	ThrottleFactor float64

	FaultRate float64   // share of requests given one fault drawn uniformly from FaultKinds
	Faults    FaultList // specific faults with their shares (--fault KIND=P, repeatable)

	TruthFile string // JSONL ground-truth log of every event written; empty = none
	// OTLPTracesEndpoint is where each finished request's llm_request span is posted
	// (OTLP/HTTP protobuf, otlp.go); empty = none.
	OTLPTracesEndpoint string

	// Reasoning (reasoning.go): the first ReasoningTokens output tokens of each chat request
	// are reasoning, sent in the delta field ReasoningField ("" = "reasoning").
	ReasoningTokens int
	ReasoningField  string

	// HistogramBuckets is the bucket layout of the latency histograms on /metrics: "vllm"
	// (vLLM's own bounds, the default, so its dashboards read the simulator unchanged) or
	// "fine" (those bounds plus 16 per doubling, so a quantile taken from the histogram is
	// within 4.4% of the truth: for checking a tool's server-side quantiles).
	HistogramBuckets string

	// Speculative decoding (specdecode.go): SpecTokens draft tokens per decode step (0 = off),
	// SpecAcceptance accepted / draft tokens.
	SpecTokens     int
	SpecAcceptance float64

	LoRA // LoRA adapters served beside the base model (lora.go)
	// Tools are the tool calls answered to requests that offer tools (tools.go).
	Tools

	Answers // answer key and structured-output faults (answers.go)
}

// DefaultConfig is Llama-3.1-8B in bf16 on one H100 with vLLM's classic scheduler limits.
func DefaultConfig() Config {
	return Config{
		Addr:                 "127.0.0.1:8000",
		ModelPreset:          "llama-3.1-8b",
		Hardware:             "h100",
		TP:                   1,
		MaxNumSeqs:           256,  // vLLM's long-standing default
		MaxNumBatchedTokens:  8192, // vLLM V1's default chunked-prefill budget for the API server
		GPUMemoryUtilization: 0.9,  // vLLM's default
		// vLLM with CUDA graphs spends a few hundred µs per step outside the GPU kernels
		// (scheduling, sampling, detokenising); 0.5 ms puts batch-1 decode near measured ~6 ms.
		StepOverhead:    500 * time.Microsecond,
		BWEfficiency:    0.85, // GEMV decode kernels reach ~80-90% of HBM peak
		FlopsEfficiency: 0.6,  // large prefill GEMMs reach ~50-70% of dense peak
		DTypeBytes:      2,
		Seed:            1,

		HistogramBuckets: "vllm",
		SpecAcceptance:   0.7,
		LoRA:             LoRA{MaxLoRAs: 1},
		Tools:            Tools{CallRate: 0.5},
	}
}

// FixedMode reports whether the config bypasses the engine model (--ttft or --itl set).
func (c *Config) FixedMode() bool { return c.TTFT > 0 || c.ITL > 0 }

// BindFlags registers every simulator flag on fs, with c's current values as defaults.
func BindFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address (loopback by default)")
	fs.StringVar(&c.ModelPreset, "model-preset", c.ModelPreset, "model preset: "+strings.Join(ModelPresets(), ", "))
	fs.StringVar(&c.Hardware, "hardware", c.Hardware, "hardware preset: "+strings.Join(HardwarePresets(), ", "))
	fs.StringVar(&c.ServedModelName, "served-model-name", c.ServedModelName, "model id to serve (default: the preset's Hugging Face id)")
	fs.IntVar(&c.TP, "tp", c.TP, "tensor-parallel degree")
	fs.IntVar(&c.MaxNumSeqs, "max-num-seqs", c.MaxNumSeqs, "maximum running sequences per step")
	fs.IntVar(&c.MaxNumBatchedTokens, "max-num-batched-tokens", c.MaxNumBatchedTokens, "token budget per step (chunked prefill)")
	fs.IntVar(&c.KVCacheTokens, "kv-cache-tokens", c.KVCacheTokens, "KV-cache capacity in tokens (0 = memory left after weights)")
	fs.IntVar(&c.MaxModelLen, "max-model-len", c.MaxModelLen, "maximum prompt+output tokens (0 = preset)")
	fs.Float64Var(&c.GPUMemoryUtilization, "gpu-memory-utilization", c.GPUMemoryUtilization, "share of device memory the engine may use")
	fs.IntVar(&c.BlockSize, "block-size", c.BlockSize, "KV-cache block size in tokens, the prefix cache's unit (0 = 16)")
	fs.BoolVar(&c.NoPrefixCache, "no-prefix-cache", c.NoPrefixCache, "turn off the prefix cache (on by default, as in vLLM)")
	fs.BoolVar(&c.DevMode, "dev-mode", c.DevMode, "serve POST /reset_prefix_cache (empties the prefix cache's free blocks), as vLLM does with VLLM_SERVER_DEV_MODE=1")
	fs.DurationVar(&c.StepOverhead, "step-overhead", c.StepOverhead, "fixed cost of every engine step")
	fs.Float64Var(&c.BWEfficiency, "bw-efficiency", c.BWEfficiency, "achieved share of peak memory bandwidth")
	fs.Float64Var(&c.FlopsEfficiency, "flops-efficiency", c.FlopsEfficiency, "achieved share of peak FLOPs")
	fs.Float64Var(&c.Params, "params", c.Params, "override: parameter count (e.g. 8.03e9)")
	fs.IntVar(&c.Layers, "layers", c.Layers, "override: transformer layers")
	fs.IntVar(&c.KVHeads, "kv-heads", c.KVHeads, "override: key/value heads")
	fs.IntVar(&c.HeadDim, "head-dim", c.HeadDim, "override: head dimension")
	fs.IntVar(&c.Hidden, "hidden", c.Hidden, "override: hidden size")
	fs.Float64Var(&c.DTypeBytes, "dtype-bytes", c.DTypeBytes, "bytes per weight/KV element (2 = bf16, 1 = fp8)")
	fs.Float64Var(&c.BandwidthTB, "bandwidth", c.BandwidthTB, "override: memory bandwidth per GPU in TB/s")
	fs.Float64Var(&c.TFLOPs, "flops", c.TFLOPs, "override: dense TFLOPs per GPU")
	fs.Float64Var(&c.MemoryGB, "memory", c.MemoryGB, "override: memory per GPU in GB")
	fs.DurationVar(&c.TTFT, "ttft", c.TTFT, "fixed mode: time to first token (bypasses the engine model)")
	fs.DurationVar(&c.ITL, "itl", c.ITL, "fixed mode: inter-token latency")
	fs.DurationVar(&c.Jitter, "jitter", c.Jitter, "fixed mode: uniform ± jitter on every delay")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "seed for output lengths, words, jitter and faults")
	fs.BoolVar(&c.ColdStart, "cold-start", c.ColdStart, "start cold with the preset profile: 200 steps × 3 and 30ms per new batch shape (each of the three flags below left at 0 takes the profile's figure)")
	fs.IntVar(&c.ColdSteps, "cold-steps", c.ColdSteps, "the first N engine steps are slower, from --cold-factor × on the first fading linearly to 1, as a fresh engine's JIT and autotuning make them (0 = off)")
	fs.Float64Var(&c.ColdFactor, "cold-factor", c.ColdFactor, "slow-down of the first of the --cold-steps steps, fading to none by the last (0 = off)")
	fs.DurationVar(&c.GraphCapture, "graph-capture", c.GraphCapture, "one-off cost of the first step of each batch shape (tokens rounded up to 1, 2, 4, … 512), as CUDA graph capture (0 = off)")
	fs.DurationVar(&c.LazyCompile, "lazy-compile", c.LazyCompile, "one-off cost of the first step of each batch size (sequences, rounded up to 1, 2, 4, … 512) and of each prefill length (prompt tokens in the step, rounded up likewise; longer ones run as 512-token micro-batches), as engines that compile kernels for a shape on its first use (llama.cpp's Vulkan pipelines, torch.compile); /version's phases count them, --truth logs each as a compile line (0 = off)")
	fs.DurationVar(&c.ThrottleAfter, "throttle-after", c.ThrottleAfter, "from this long after the first engine step on, every step is slower by --throttle-factor, as thermal throttling (0 = off)")
	fs.Float64Var(&c.ThrottleFactor, "throttle-factor", c.ThrottleFactor, "slow-down of every step after --throttle-after (0 = off)")
	fs.Float64Var(&c.FaultRate, "fault-rate", c.FaultRate, "share of requests given one random fault")
	fs.Var(&c.Faults, "fault", "KIND=P or KIND:ARG=P, repeatable; kinds: "+strings.Join(FaultKinds, ", "))
	fs.StringVar(&c.TruthFile, "truth", c.TruthFile, "write the ground-truth JSONL of every event written to FILE")
	fs.StringVar(&c.OTLPTracesEndpoint, "otlp-traces-endpoint", c.OTLPTracesEndpoint, "export each finished request's llm_request span, continuing its traceparent, with vLLM's attribute names and the engine's own times, to `URL` (OTLP/HTTP protobuf; /v1/traces when URL has no path); with --truth each span's times are logged as a span line")
	bindReasoningFlags(fs, c)
	fs.StringVar(&c.HistogramBuckets, "histogram-buckets", c.HistogramBuckets, "latency histogram buckets on /metrics: vllm (vLLM's bounds) or fine (vLLM's plus 16 per doubling, quantiles within 4.4%)")
	bindSpecFlags(fs, c)
	bindLoRAFlags(fs, c)
	bindToolFlags(fs, c)
	bindAnswerFlags(fs, c)
}

// Validate checks every field and names the flag at fault.
func (c *Config) Validate() error {
	if c.OTLPTracesEndpoint != "" {
		if _, err := tracesURL(c.OTLPTracesEndpoint); err != nil { // otlp.go
			return err
		}
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("--addr %q: %v", c.Addr, err)
	}
	if _, ok := modelPresets[c.ModelPreset]; !ok {
		return fmt.Errorf("--model-preset %q unknown (known: %s)", c.ModelPreset, strings.Join(ModelPresets(), ", "))
	}
	if c.HistogramBuckets != "" && c.HistogramBuckets != "vllm" && c.HistogramBuckets != "fine" {
		return fmt.Errorf("--histogram-buckets %q unknown (known: vllm, fine)", c.HistogramBuckets)
	}
	if _, ok := hardwarePresets[c.Hardware]; !ok {
		return fmt.Errorf("--hardware %q unknown (known: %s)", c.Hardware, strings.Join(HardwarePresets(), ", "))
	}
	for _, chk := range []struct {
		name string
		v    int
		min  int
	}{
		{"--tp", c.TP, 1}, {"--max-num-seqs", c.MaxNumSeqs, 1}, {"--max-num-batched-tokens", c.MaxNumBatchedTokens, 1},
		{"--kv-cache-tokens", c.KVCacheTokens, 0}, {"--max-model-len", c.MaxModelLen, 0}, {"--layers", c.Layers, 0},
		{"--kv-heads", c.KVHeads, 0}, {"--head-dim", c.HeadDim, 0}, {"--hidden", c.Hidden, 0}, {"--block-size", c.BlockSize, 0},
	} {
		if chk.v < chk.min {
			return fmt.Errorf("%s must be at least %d, got %d", chk.name, chk.min, chk.v)
		}
	}
	if err := c.validateFloats(); err != nil {
		return err
	}
	if err := c.validateDurations(); err != nil {
		return err
	}
	if err := c.validateStartup(); err != nil {
		return err
	}
	if err := errors.Join(c.validateSpec(), c.validateLoRA(), c.validateReasoning(), c.validateTools(), c.validateAnswers()); err != nil {
		return err
	}
	sum := 0.0
	for _, f := range c.Faults {
		sum += f.P
	}
	if sum > 1+1e-9 {
		return fmt.Errorf("--fault probabilities sum to %g, more than 1", sum)
	}
	if !c.FixedMode() {
		if _, err := newModel(c); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) validateFloats() error {
	for _, chk := range []struct {
		name     string
		v        float64
		min, max float64
		minOpen  bool
	}{
		{"--gpu-memory-utilization", c.GPUMemoryUtilization, 0, 1, true},
		{"--bw-efficiency", c.BWEfficiency, 0, 1, true},
		{"--flops-efficiency", c.FlopsEfficiency, 0, 1, true},
		{"--fault-rate", c.FaultRate, 0, 1, false},
		{"--dtype-bytes", c.DTypeBytes, 0, 8, false},
		{"--bandwidth", c.BandwidthTB, 0, 1e3, false},
		{"--flops", c.TFLOPs, 0, 1e6, false},
		{"--memory", c.MemoryGB, 0, 1e5, false},
	} {
		if math.IsNaN(chk.v) || chk.v < chk.min || chk.v > chk.max || (chk.minOpen && chk.v == chk.min) {
			return fmt.Errorf("%s must be in %s%g, %g], got %g", chk.name, map[bool]string{true: "(", false: "["}[chk.minOpen], chk.min, chk.max, chk.v)
		}
	}
	if c.Params != 0 && (c.Params < 1e6 || math.IsNaN(c.Params)) {
		return fmt.Errorf("--params is a parameter count (e.g. 8.03e9), got %g", c.Params)
	}
	return nil
}

func (c *Config) validateDurations() error {
	for _, chk := range []struct {
		name string
		v    time.Duration
	}{{"--step-overhead", c.StepOverhead}, {"--ttft", c.TTFT}, {"--itl", c.ITL}, {"--jitter", c.Jitter}} {
		if chk.v < 0 {
			return fmt.Errorf("%s must not be negative, got %s", chk.name, chk.v)
		}
	}
	if c.Jitter > 0 && !c.FixedMode() {
		return errors.New("--jitter applies to fixed mode only: set --ttft and/or --itl")
	}
	return nil
}
