package sim

import (
	"sort"
	"time"
)

// The --cold-start profile. A fresh vLLM runs its first requests several times slower while
// torch.compile, Triton autotuning and the caching allocator warm up, and capturing one CUDA
// graph takes tens of milliseconds (vLLM spends seconds on its ~67 capture sizes at start-up);
// engines that capture lazily pay that on the first step of each new shape instead.
const (
	presetColdSteps    = 200
	presetColdFactor   = 3.0
	presetGraphCapture = 30 * time.Millisecond
)

// ModelSpec is the part of a model's architecture that the roofline needs. Figures come from
// each model's Hugging Face config.json (num_hidden_layers, num_key_value_heads, head_dim or
// hidden_size/num_attention_heads, max_position_embeddings) and its model card (parameters).
type ModelSpec struct {
	Name        string  // served model name by default (Hugging Face id)
	Params      float64 // parameter count
	Layers      int
	KVHeads     int
	HeadDim     int
	Hidden      int // hidden_size: query width (heads*head_dim) for the attention FLOPs term
	MaxModelLen int // max_position_embeddings
}

// HardwareSpec is one accelerator. Figures are vendor datasheet values: memory bandwidth,
// dense (no sparsity) BF16 tensor TFLOPs, and memory capacity.
type HardwareSpec struct {
	Name        string
	BandwidthTB float64 // TB/s (1e12 bytes/s)
	TFLOPs      float64 // dense BF16, 1e12 FLOP/s
	MemoryGB    float64 // GB of device memory (1e9 bytes; datasheet figure)
}

// modelPresets holds the models selectable with --model-preset.
var modelPresets = map[string]ModelSpec{
	// meta-llama/Llama-3.1-8B-Instruct config.json: 32 layers, 8 KV heads, hidden 4096,
	// 32 heads (head_dim 128), max_position_embeddings 131072; 8.03B params (model card).
	"llama-3.1-8b": {"meta-llama/Llama-3.1-8B-Instruct", 8.03e9, 32, 8, 128, 4096, 131072},
	// meta-llama/Llama-3.1-70B-Instruct config.json: 80 layers, 8 KV heads, hidden 8192,
	// 64 heads (head_dim 128), 131072 positions; 70.6B params (model card).
	"llama-3.1-70b": {"meta-llama/Llama-3.1-70B-Instruct", 70.6e9, 80, 8, 128, 8192, 131072},
	// Qwen/Qwen2.5-7B-Instruct config.json: 28 layers, 4 KV heads, hidden 3584, 28 heads
	// (head_dim 128), 32768 positions; 7.61B params (model card).
	"qwen2.5-7b": {"Qwen/Qwen2.5-7B-Instruct", 7.6e9, 28, 4, 128, 3584, 32768},
	// Qwen/Qwen2-VL-7B-Instruct config.json: 28 layers, 4 KV heads, hidden 3584, 28 heads
	// (head_dim 128), 32768 positions; 8.29B params with its 675M vision encoder (model
	// card), whose per-patch cost is folded into the per-token roofline. Images and audio
	// are costed by its MediaRule (media.go).
	"qwen2-vl-7b": {"Qwen/Qwen2-VL-7B-Instruct", 8.29e9, 28, 4, 128, 3584, 32768},
	// mistralai/Mistral-7B-Instruct-v0.3 config.json: 32 layers, 8 KV heads, hidden 4096,
	// 32 heads (head_dim 128), 32768 positions; 7.24B params (model card).
	"mistral-7b": {"mistralai/Mistral-7B-Instruct-v0.3", 7.24e9, 32, 8, 128, 4096, 32768},
}

// hardwarePresets holds the accelerators selectable with --hardware.
var hardwarePresets = map[string]HardwareSpec{
	// NVIDIA H100 SXM5 datasheet: 3.35 TB/s HBM3, 989 TFLOPs dense BF16, 80 GB.
	"h100": {"NVIDIA H100 80GB HBM3 (simulated)", 3.35, 989, 80},
	// NVIDIA H200 SXM datasheet: 4.8 TB/s HBM3e, 989 TFLOPs dense BF16, 141 GB.
	"h200": {"NVIDIA H200 (simulated)", 4.8, 989, 141},
	// NVIDIA A100 80GB SXM datasheet: 2.039 TB/s HBM2e, 312 TFLOPs dense BF16, 80 GB.
	"a100": {"NVIDIA A100-SXM4-80GB (simulated)", 2.039, 312, 80},
	// NVIDIA L40S datasheet: 864 GB/s GDDR6, 362 TFLOPs dense BF16 (733 with sparsity), 48 GB.
	"l40s": {"NVIDIA L40S (simulated)", 0.864, 362, 48},
	// NVIDIA L4 datasheet: 300 GB/s GDDR6, 121 TFLOPs dense BF16 (242 with sparsity), 24 GB.
	"l4": {"NVIDIA L4 (simulated)", 0.3, 121, 24},
	// AMD Instinct MI300X datasheet: 5.3 TB/s HBM3, 1307 TFLOPs dense BF16, 192 GB.
	"mi300x": {"AMD Instinct MI300X (simulated)", 5.3, 1307, 192},
	// NVIDIA B200 (HGX B200 datasheet, per GPU): 8 TB/s HBM3e, 2250 TFLOPs dense BF16, 192 GB.
	"b200": {"NVIDIA B200 (simulated)", 8, 2250, 192},
}

// ModelPresets lists the names accepted by --model-preset, sorted.
func ModelPresets() []string { return sortedKeys(modelPresets) }

// HardwarePresets lists the names accepted by --hardware, sorted.
func HardwarePresets() []string { return sortedKeys(hardwarePresets) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
