package conditions

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"servebench/record"
)

// Server family names (the value of server.family).
const (
	SimFamily = "servebench-sim"
	VLLM      = "vllm"
	SGLang    = "sglang"
	TGI       = "tgi"
	LlamaCpp  = "llama.cpp"
	Ollama    = "ollama"
)

// facts collects detected conditions, skipping absent values: absence is not a fact, and the
// unknowns are added once, at the end, by Complete.
type facts Set

func (f *facts) put(key string, v any) {
	var s string
	switch t := v.(type) {
	case nil:
		return
	case string:
		s = t
	case float64:
		s = strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		s = strconv.FormatBool(t)
	default:
		s = fmt.Sprint(t)
	}
	// a server's literal "unknown" (Ollama's quantization_level for a GGUF file type it does
	// not name) says it could not tell: an unknown value, not the detected value "unknown"
	if s = strings.TrimSpace(s); s != "" && !strings.EqualFold(s, Unknown) {
		(*Set)(f).Add(key, s, Detected)
	}
}

// putAll copies the named keys of m as server flags (server.flag.<name>).
func (f *facts) putFlags(m map[string]any, names ...string) {
	for _, n := range names {
		f.put(FlagPrefix+n, m[n])
	}
}

// openAIModels reads GET /v1/models: the entry of the model under test (the first when none
// was named), and max_model_len where the server gives it (vLLM, the simulator).
func openAIModels(a Answers, model string) []record.Condition {
	var m struct {
		Data []struct {
			ID          string         `json:"id"`
			OwnedBy     string         `json:"owned_by"`
			Root        string         `json:"root"`
			MaxModelLen any            `json:"max_model_len"`
			Meta        map[string]any `json:"meta"` // llama.cpp
		} `json:"data"`
	}
	if !a.json("/v1/models", &m) || len(m.Data) == 0 {
		return nil
	}
	var f facts
	ids := make([]string, len(m.Data))
	for i, d := range m.Data {
		ids[i] = d.ID
	}
	i := modelIndex(ids, model)
	if i < 0 {
		// a model the server does not list: the one asked for is the one measured
		f.put(Model, model)
		return f
	}
	d := m.Data[i]
	f.put(Model, d.ID)
	f.put(MaxModelLen, d.MaxModelLen)
	if d.OwnedBy == "vllm" {
		f.put(ServerFamily, VLLM)
		f.put("model.path", d.Root)
	}
	if d.Meta != nil {
		f.put("model.parameters", d.Meta["n_params"])
		f.put("model.size_bytes", d.Meta["size"])
		f.put("model.context_train", d.Meta["n_ctx_train"])
		f.put(Quantization, d.Meta["ftype"])
		f.put("model.vocab_size", d.Meta["n_vocab"])
	}
	return f
}

// modelIndex finds the model under test among the names a server lists: the same name, or
// the same with Ollama's default tag ":latest" added. With no model named, the first; -1 when
// the model is not listed.
func modelIndex(names []string, model string) int {
	if model == "" {
		if len(names) > 0 {
			return 0
		}
		return -1
	}
	for _, want := range []string{model, model + ":latest"} {
		if i := slices.Index(names, want); i >= 0 {
			return i
		}
	}
	return -1
}

// simulator reads the simulator's /version: {"simulator": true, "version", "config": {...}}.
// The simulated engine's hardware, model and limits are conditions like a real server's; its
// speed parameters (fixed-mode ttft/itl, efficiencies, faults) are sim.* keys, which stand for
// the server's own performance and so do not make two runs incomparable.
func simulator(a Answers) []record.Condition {
	var v struct {
		Simulator bool              `json:"simulator"`
		Version   string            `json:"version"`
		Config    map[string]string `json:"config"`
	}
	if !a.json("/version", &v) || !v.Simulator {
		return nil
	}
	var f facts
	f.put(ServerFamily, SimFamily)
	f.put(ServerVer, v.Version)
	f.put(Tokenizer, "servebench-sim (one token per word)")
	for k, val := range v.Config {
		if key, ok := simKeys[k]; ok {
			if key != "" { // already stated another way
				f.put(key, val)
			}
		} else {
			f.put("sim."+k, val)
		}
	}
	return f
}

// simKeys maps the simulator's config keys that are real-server conditions.
var simKeys = map[string]string{
	"model": Model, "dtype": DType, "gpu": GPUName, "memory_gb": GPUMemory, "tp": FlagPrefix + "tp",
	"max_num_seqs": MaxNumSeqs, "max_num_batched_tokens": MaxNumBatchedTokens, "kv_cache_tokens": KVCacheTokens,
	"max_model_len": MaxModelLen, "params": "model.parameters", "model_preset": FlagPrefix + "model_preset",
	"hardware": FlagPrefix + "hardware", "gpu_memory_utilization": FlagPrefix + "gpu_memory_utilization",
	"server": "", "simulated": "server.simulated",
}

// vllm reads /version ({"version": "0.8.5"}) when /metrics or /v1/models says vLLM, and
// every vllm:*_info gauge of /metrics (cache_config_info: block_size, cache_dtype,
// gpu_memory_utilization, num_gpu_blocks ...), whose labels are the engine's settings.
func vllm(a Answers) []record.Condition {
	var sim struct {
		Simulator bool `json:"simulator"`
	}
	if a.json("/version", &sim) && sim.Simulator {
		return nil // the simulator imitates vLLM's metrics, but it is not vLLM
	}
	met, metOK := a["/metrics"]
	isVLLM := metOK && bytes.Contains(met, []byte("vllm:"))
	var f facts
	var m struct {
		Data []struct {
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	if a.json("/v1/models", &m) && len(m.Data) > 0 && m.Data[0].OwnedBy == "vllm" {
		isVLLM = true
	}
	if !isVLLM {
		return nil
	}
	f.put(ServerFamily, VLLM)
	var v struct {
		Version string `json:"version"`
	}
	if a.json("/version", &v) {
		f.put(ServerVer, v.Version)
	}
	if metOK {
		for name, labels := range infoGauges(met, "vllm:") {
			for k, val := range labels {
				f.put(FlagPrefix+vllmFlag(name, k), val)
			}
		}
	}
	if blocks, size := f.value(FlagPrefix+"num_gpu_blocks"), f.value(FlagPrefix+"block_size"); blocks != "" && size != "" {
		nb, e1 := strconv.Atoi(blocks)
		bs, e2 := strconv.Atoi(size)
		if e1 == nil && e2 == nil {
			f.put(KVCacheTokens, nb*bs)
		}
	}
	return f
}

func (f facts) value(k string) string { return Set(f).Value(k) }

// vllmFlag names a label of a vLLM info gauge; cache_config_info labels keep their own names
// (they are vLLM's engine arguments), other gauges' labels are prefixed with the gauge.
func vllmFlag(gauge, label string) string {
	if gauge == "cache_config_info" {
		return label
	}
	return strings.TrimSuffix(gauge, "_info") + "." + label
}

// infoGauges parses the Prometheus text lines `prefix<name>_info{k="v",...} 1` into their
// labels, by gauge name without the prefix.
func infoGauges(body []byte, prefix string) map[string]map[string]string {
	out := map[string]map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, "_info") {
			continue
		}
		end := strings.LastIndex(rest, "}")
		if end < 0 {
			continue
		}
		out[strings.TrimPrefix(name, prefix)] = parseLabels(rest[:end])
	}
	return out
}

// parseLabels reads k="v",k2="v2" (values may contain escaped quotes and commas).
func parseLabels(s string) map[string]string {
	m := map[string]string{}
	for s != "" {
		k, rest, ok := strings.Cut(s, "=\"")
		if !ok {
			break
		}
		var v strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			v.WriteByte(rest[i])
		}
		m[strings.TrimSpace(strings.TrimLeft(k, ","))] = v.String()
		if i >= len(rest) {
			break
		}
		s = strings.TrimLeft(rest[i+1:], ", ")
	}
	return m
}
