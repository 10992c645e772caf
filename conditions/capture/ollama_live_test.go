package capture

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"servebench/client"
	"servebench/conditions"
	"servebench/internal/peertest"
)

// TestDetectOllamaLive asks a real Ollama serving two models about each: cold, then with both
// loaded. Each model's own settings are read (mini2's Modelfile sets num_ctx and temperature,
// mini's sets nothing), the model loaded first never stands in for the one asked about, and
// the conditions of one model are the same cold and warm; only the observations differ.
// Skipped where Ollama is not built (see peertest.OllamaBin).
func TestDetectOllamaLive(t *testing.T) {
	stubGPU(t, "")
	url := peertest.Ollama(t, map[string]string{
		"mini":  "FROM {{peers}}/models/mini.gguf\n",
		"mini2": "FROM {{peers}}/models/mini.gguf\nPARAMETER num_ctx 1024\nPARAMETER temperature 0.3\n",
	})
	tg := client.Target{BaseURL: url, HTTP: http.DefaultClient}
	ctx := context.Background()
	cold, coldObs := conditions.SplitObserved(Detect(ctx, tg, "mini"))
	if coldObs.Value(conditions.ObservedPrefix+"ollama.loaded") != "false" {
		t.Errorf("cold observations %v: want mini not loaded", coldObs)
	}
	// load mini2 first, then mini: /api/ps lists both
	for _, m := range []string{"mini2", "mini"} {
		generate(t, url, m)
	}
	warm, warmObs := conditions.SplitObserved(Detect(ctx, tg, "mini"))
	if warmObs.Value(conditions.ObservedPrefix+"ollama.loaded") != "true" || !strings.Contains(warmObs.Value(conditions.ObservedPrefix+"ollama.loaded_models"), "mini2") {
		t.Errorf("warm observations %v: want mini loaded beside mini2", warmObs)
	}
	for k, want := range map[string]string{conditions.Model: "mini:latest", conditions.ServerVer: "0.17.4",
		conditions.FlagPrefix + "num_ctx": "", conditions.FlagPrefix + "temperature": ""} {
		if got := warm.Value(k); got != want {
			t.Errorf("--model mini, both loaded: %s = %q, want %q", k, got, want)
		}
	}
	if d := conditions.Diff(cold, warm, nil); len(d) != 0 {
		t.Errorf("mini cold vs warm: conditions differ: %+v", d)
	}
	two := Detect(ctx, tg, "mini2")
	for k, want := range map[string]string{conditions.Model: "mini2:latest",
		conditions.FlagPrefix + "num_ctx": "1024", conditions.FlagPrefix + "temperature": "0.3"} {
		if got := two.Value(k); got != want {
			t.Errorf("--model mini2: %s = %q, want %q", k, got, want)
		}
	}
}

// generate sends one short non-streaming /api/generate, which loads the model.
func generate(t *testing.T, url, model string) {
	t.Helper()
	body := `{"model":"` + model + `","prompt":"hello","stream":false,"options":{"num_predict":2}}`
	resp, err := http.Post(url+"/api/generate", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("generate %s: %s", model, resp.Status)
	}
}
