package conditions

import (
	"encoding/json"
	"strings"

	"servebench/record"
)

// sglang reads /get_server_info (or /server_info in newer releases): SGLang's server
// arguments, version and scheduler limits, and /get_model_info for the tokenizer.
func sglang(a Answers) []record.Condition {
	var m map[string]any
	if !a.json("/get_server_info", &m) && !a.json("/server_info", &m) {
		return nil
	}
	if _, ok := m["model_path"]; !ok {
		return nil // some other server's answer to the same path
	}
	var f facts
	f.put(ServerFamily, SGLang)
	f.put(ServerVer, m["version"])
	f.put("model.path", m["model_path"])
	f.put(DType, m["dtype"])
	f.put(Quantization, orNone(m, "quantization"))
	f.put(MaxNumSeqs, firstOf(m, "max_running_requests"))
	f.put(KVCacheTokens, m["max_total_num_tokens"])
	f.put(MaxNumBatchedTokens, firstOf(m, "chunked_prefill_size"))
	f.put(MaxModelLen, m["context_length"])
	f.putFlags(m, "tp_size", "dp_size", "kv_cache_dtype", "mem_fraction_static", "schedule_policy",
		"attention_backend", "sampling_backend", "disable_radix_cache", "enable_torch_compile",
		"cuda_graph_max_bs", "disable_cuda_graph", "speculative_algorithm", "max_prefill_tokens")
	var mi map[string]any
	if a.json("/get_model_info", &mi) {
		f.put(Tokenizer, mi["tokenizer_path"])
	} else {
		f.put(Tokenizer, m["tokenizer_path"])
	}
	return f
}

// firstOf returns m[k], or when it is null the scheduler's own figure from
// internal_states[0] (SGLang leaves an unset argument null and reports the value it chose there).
func firstOf(m map[string]any, k string) any {
	if v := m[k]; v != nil {
		return v
	}
	if st, ok := m["internal_states"].([]any); ok && len(st) > 0 {
		if s0, ok := st[0].(map[string]any); ok {
			return s0[k]
		}
	}
	return nil
}

// orNone returns m[k], or "none" when the key is present with a null value (SGLang says
// quantization: null for an unquantised model; that is a fact, not an unknown).
func orNone(m map[string]any, k string) any {
	v, ok := m[k]
	if ok && v == nil {
		return "none"
	}
	return v
}

// tgi reads Text Generation Inference's /info: model, revision, dtype, batching limits,
// version and commit.
func tgi(a Answers) []record.Condition {
	var m map[string]any
	if !a.json("/info", &m) {
		return nil
	}
	if _, ok := m["model_id"]; !ok {
		return nil
	}
	var f facts
	f.put(ServerFamily, TGI)
	f.put(Model, m["model_id"])
	f.put("model.revision", m["model_sha"])
	f.put(DType, m["model_dtype"])
	f.put(ServerVer, m["version"])
	f.put(ServerCommit, m["sha"])
	f.put(MaxNumSeqs, m["max_batch_size"])
	f.put(MaxNumBatchedTokens, m["max_batch_prefill_tokens"])
	f.put("batching.max_batch_total_tokens", m["max_batch_total_tokens"])
	f.put(MaxModelLen, m["max_total_tokens"])
	f.put(Tokenizer, m["model_id"])
	f.putFlags(m, "max_concurrent_requests", "max_input_tokens", "max_input_length", "max_waiting_tokens",
		"waiting_served_ratio", "max_best_of", "docker_label", "model_device_type")
	return f
}

// llamaCpp reads llama-server's /props (build, slots, model file, its quantisation) and
// /slots (per-slot context).
func llamaCpp(a Answers) []record.Condition {
	var p struct {
		BuildInfo  string  `json:"build_info"`
		TotalSlots float64 `json:"total_slots"`
		ModelPath  string  `json:"model_path"`
		ModelFtype string  `json:"model_ftype"`
		Gen        struct {
			NCtx float64 `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if !a.json("/props", &p) || (p.BuildInfo == "" && p.TotalSlots == 0) {
		return nil
	}
	var f facts
	f.put(ServerFamily, LlamaCpp)
	f.put(ServerVer, p.BuildInfo)
	f.put(MaxNumSeqs, int(p.TotalSlots))
	f.put("model.path", p.ModelPath)
	f.put(Quantization, p.ModelFtype)
	f.put(Tokenizer, "gguf (model file)")
	if p.Gen.NCtx > 0 {
		f.put(FlagPrefix+"ctx_per_slot", int(p.Gen.NCtx))
	}
	var slots []struct {
		NCtx        float64 `json:"n_ctx"`
		Speculative bool    `json:"speculative"`
	}
	if a.json("/slots", &slots) && len(slots) > 0 {
		f.put(FlagPrefix+"ctx_per_slot", int(slots[0].NCtx))
		// a request's prompt + output must fit its slot's share of the context
		f.put(MaxModelLen, int(slots[0].NCtx))
		f.put(FlagPrefix+"speculative", slots[0].Speculative)
		f.put(MaxNumSeqs, len(slots))
	}
	f.put(FlagPrefix+"metrics", a.has("/metrics"))
	return f
}

// ollama reads /api/version, the model under test's name as /v1/models spells it, and from
// /api/ps only observations: whether that model is loaded now, the memory it holds
// (size_vram), the context it was loaded with, and which models are loaded. None of them is a
// condition: Ollama loads a model on its first request and unloads it after 5 idle minutes,
// so one server reads differently cold and warm, and another model may be the one loaded.
// The model's own settings come from /api/show, asked for the model under test (ollamaShow).
func ollama(a Answers, model string) []record.Condition {
	var v struct {
		Version string `json:"version"`
	}
	if !a.json("/api/version", &v) || v.Version == "" {
		return nil
	}
	var f facts
	f.put(ServerFamily, Ollama)
	f.put(ServerVer, v.Version)
	model = ollamaModel(a, model)
	f.put(Model, model)
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			SizeVRAM      any    `json:"size_vram"`
			ContextLength any    `json:"context_length"`
		} `json:"models"`
	}
	if !a.json("/api/ps", &ps) {
		return f
	}
	names := make([]string, len(ps.Models))
	for i, m := range ps.Models {
		names[i] = m.Name
	}
	f.put(ObservedPrefix+"ollama.loaded_models", strings.Join(names, ", "))
	i := -1
	if model != "" {
		i = modelIndex(names, model)
	}
	f.put(ObservedPrefix+"ollama.loaded", i >= 0)
	if i >= 0 {
		f.put(ObservedPrefix+"ollama.size_vram", ps.Models[i].SizeVRAM)
		f.put(ObservedPrefix+"ollama.context_length", ps.Models[i].ContextLength)
	}
	return f
}

// ollamaModel is the model under test as Ollama's /v1/models spells it ("mini" is listed as
// "mini:latest"); with none named, the first it lists; a model it does not list, as named.
func ollamaModel(a Answers, model string) string {
	var m struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if !a.json("/v1/models", &m) {
		return model
	}
	ids := make([]string, len(m.Data))
	for i, d := range m.Data {
		ids[i] = d.ID
	}
	if i := modelIndex(ids, model); i >= 0 {
		return ids[i]
	}
	return model
}

// ollamaDetails is the "details" object of /api/show.
type ollamaDetails struct {
	Format            string `json:"format"`
	Family            string `json:"family"`
	ParameterSize     string `json:"parameter_size"`
	QuantizationLevel string `json:"quantization_level"`
}

func (d ollamaDetails) put(f *facts) {
	f.put(Quantization, d.QuantizationLevel)
	f.put("model.parameters", d.ParameterSize)
	f.put("model.family", d.Family)
	f.put("model.format", d.Format)
}

// ollamaFollowUp asks POST /api/show for the model under test (with none named, the first of
// /v1/models; never the first of /api/ps, which is whatever happens to be loaded). Nothing when
// the server is not Ollama or names no model.
func ollamaFollowUp(a Answers, model string) []Probe {
	s := Set(ollama(a, model))
	model = s.Value(Model)
	if s.Value(ServerFamily) != Ollama || model == "" {
		return nil
	}
	body, _ := json.Marshal(map[string]string{"model": model})
	return []Probe{{Method: methodPost, Path: "/api/show", Body: body}}
}

// ollamaShow reads the answer to POST /api/show: quantisation, parameter size, context length
// and the Modelfile parameters (num_ctx, stop ...), which are the model's server-side flags.
// It reads the model's files, so it answers the same whether the model is loaded or not.
func ollamaShow(a Answers) []record.Condition {
	var show struct {
		Details    ollamaDetails  `json:"details"`
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
	}
	if !a.json("/api/show", &show) {
		return nil
	}
	var f facts
	show.Details.put(&f)
	for k, v := range show.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			f.put("model.context_train", v)
		}
	}
	f.put(Tokenizer, "gguf (model file)")
	for _, line := range strings.Split(show.Parameters, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok && k != "stop" {
			f.put(FlagPrefix+k, strings.TrimSpace(v))
		}
	}
	return f
}
