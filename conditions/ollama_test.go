package conditions

import (
	"strconv"
	"testing"
)

// The recordings testdata/ollama-0.17.4-{cold,warm,two} are a real Ollama 0.17.4 serving three
// models made from ../shared/peers/models: mini (FROM mini.gguf), mini2 (the same file with
// PARAMETER num_ctx 1024 and temperature 0.3) and tiny (FROM tiny.gguf). cold: nothing loaded;
// warm: mini loaded; two: tiny and mini2 loaded (Ollama keeps one runner per model file, so
// loading mini2 unloaded mini). /api/show was asked about each model by name
// (api_show@MODEL.txt).

// ollamaSet is the conditions and the observations discovery finds in a recording about model.
func ollamaSet(t *testing.T, dir, model string) (conds, observed Set) {
	t.Helper()
	return SplitObserved(FromAnswers(recordedAnswers(t, dir, model), model))
}

// TestOllamaModelUnderTest: with two models loaded, each model is described by its own
// settings, whichever /api/ps lists first and whether or not it is one of them; the load
// state is observed, not a condition.
func TestOllamaModelUnderTest(t *testing.T) {
	for _, tc := range []struct {
		model string
		want  map[string]string
	}{
		{"mini", map[string]string{Model: "mini:latest", FlagPrefix + "num_ctx": "", FlagPrefix + "temperature": ""}},
		{"mini:latest", map[string]string{Model: "mini:latest", FlagPrefix + "num_ctx": ""}},
		{"mini2", map[string]string{Model: "mini2:latest", FlagPrefix + "num_ctx": "1024", FlagPrefix + "temperature": "0.3"}},
	} {
		conds, obs := ollamaSet(t, "ollama-0.17.4-two", tc.model)
		for k, v := range tc.want {
			if got := conds.Value(k); got != v {
				t.Errorf("--model %s: %s = %q, want %q", tc.model, k, got, v)
			}
		}
		for _, c := range conds {
			if c.Key == FlagPrefix+"size_vram" || c.Key == "server.flag.context_length" {
				t.Errorf("--model %s: load state %s recorded as a condition", tc.model, c.Key)
			}
		}
		loaded := tc.model == "mini2"
		if obs.Value(ObservedPrefix+"ollama.loaded") != strconv.FormatBool(loaded) || obs.Value(ObservedPrefix+"ollama.loaded_models") != "tiny:latest, mini2:latest" {
			t.Errorf("--model %s: observations %v", tc.model, obs)
		}
	}
	// mini2's context is the one it was loaded with
	if _, obs := ollamaSet(t, "ollama-0.17.4-two", "mini2"); obs.Value(ObservedPrefix+"ollama.context_length") != "1024" {
		t.Errorf("mini2 observed context %q, want 1024", obs.Value(ObservedPrefix+"ollama.context_length"))
	}
	if f := FollowUps(recordedAnswers(t, "ollama-0.17.4-two", ""), ""); len(f) != 1 || string(f[0].Body) != `{"model":"mini:latest"}` {
		t.Errorf("no --model: follow-ups %+v, want /api/show for the first /v1/models lists", f)
	}
}

// TestOllamaColdWarmComparable: the same model read cold and warm has the same conditions;
// only the observations differ.
func TestOllamaColdWarmComparable(t *testing.T) {
	cold, coldObs := ollamaSet(t, "ollama-0.17.4-cold", "mini")
	for dir, loaded := range map[string]string{"ollama-0.17.4-warm": "true", "ollama-0.17.4-two": "false"} {
		warm, warmObs := ollamaSet(t, dir, "mini")
		if d := Diff(Complete(cold), Complete(warm), nil); len(d) != 0 {
			t.Errorf("cold vs %s: %+v, want no difference", dir, d)
		}
		if coldObs.Value(ObservedPrefix+"ollama.loaded") != "false" || warmObs.Value(ObservedPrefix+"ollama.loaded") != loaded {
			t.Errorf("loaded: cold %v, %s %v", coldObs, dir, warmObs)
		}
	}
	if _, obs := ollamaSet(t, "ollama-0.17.4-warm", "mini"); obs.Value(ObservedPrefix+"ollama.size_vram") != "0" || obs.Value(ObservedPrefix+"ollama.context_length") != "4096" {
		t.Errorf("warm observations %v: want size_vram 0, context 4096", obs)
	}
	// observations are informative wherever they end up
	if Blocking(ObservedPrefix + "ollama.size_vram") {
		t.Errorf("an observation blocks comparison")
	}
}

// TestOllamaUnknownQuantization: Ollama says quantization_level "unknown" for the mini GGUF;
// that is an unknown value, not a detected one.
func TestOllamaUnknownQuantization(t *testing.T) {
	conds, _ := ollamaSet(t, "ollama-0.17.4-cold", "mini")
	c, ok := Complete(conds).Get(Quantization)
	if !ok || c.Source != Unknown || c.Value != "" {
		t.Errorf("model.quantization = %+v, want unknown", c)
	}
	s := Merge(nil)
	(*facts)(&s).put(Quantization, "Unknown")
	if len(s) != 0 {
		t.Errorf("a literal Unknown was recorded: %v", s)
	}
}

// TestOpenAIModelsUnderTest: the same rule for an OpenAI-compatible server that lists several
// models (vLLM's base model and a LoRA adapter): the entry of --model is read, not the first;
// a model it does not list is recorded as asked for.
func TestOpenAIModelsUnderTest(t *testing.T) {
	a := Answers{"/v1/models": []byte(`{"data":[
		{"id":"meta-llama/Llama-3.1-8B-Instruct","owned_by":"vllm","root":"/models/base","max_model_len":32768},
		{"id":"sql-lora","owned_by":"vllm","root":"/adapters/sql","parent":"meta-llama/Llama-3.1-8B-Instruct","max_model_len":8192}]}`)}
	for model, want := range map[string][3]string{
		"":          {"meta-llama/Llama-3.1-8B-Instruct", "/models/base", "32768"},
		"sql-lora":  {"sql-lora", "/adapters/sql", "8192"},
		"elsewhere": {"elsewhere", "", ""},
	} {
		s := FromAnswers(a, model)
		if got := [3]string{s.Value(Model), s.Value("model.path"), s.Value(MaxModelLen)}; got != want {
			t.Errorf("--model %q: model, path, max_model_len = %q, want %q", model, got, want)
		}
	}
}
