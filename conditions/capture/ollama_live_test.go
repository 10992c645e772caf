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

// TestDetectOllamaLive asks a real Ollama serving three models about mini: cold, with two
// other models loaded (mini2, made from the same file with its own num_ctx and temperature,
// and tiny), and warm. Each time mini's own settings are read, never a loaded model's, and
// they are the same; only the observations differ. Skipped where Ollama is not built (see
// peertest.OllamaBin).
func TestDetectOllamaLive(t *testing.T) {
	stubGPU(t, "")
	url := peertest.Ollama(t, map[string]string{
		"mini":  "FROM {{peers}}/models/mini.gguf\n",
		"mini2": "FROM {{peers}}/models/mini.gguf\nPARAMETER num_ctx 1024\nPARAMETER temperature 0.3\n",
		"tiny":  "FROM {{peers}}/models/tiny.gguf\n",
	})
	tg := client.Target{BaseURL: url, HTTP: http.DefaultClient}
	ctx := context.Background()
	observed := conditions.ObservedPrefix + "ollama."
	cold, obs := conditions.SplitObserved(Detect(ctx, tg, "mini"))
	if obs.Value(observed+"loaded") != "false" {
		t.Errorf("cold observations %v: want mini not loaded", obs)
	}
	for k, want := range map[string]string{conditions.Model: "mini:latest", conditions.ServerVer: "0.17.4",
		conditions.FlagPrefix + "num_ctx": "", conditions.FlagPrefix + "temperature": ""} {
		if got := cold.Value(k); got != want {
			t.Errorf("--model mini: %s = %q, want %q", k, got, want)
		}
	}
	generate(t, url, "mini2")
	generate(t, url, "tiny")
	others, obs := conditions.SplitObserved(Detect(ctx, tg, "mini"))
	if obs.Value(observed+"loaded") != "false" || !strings.Contains(obs.Value(observed+"loaded_models"), "mini2") {
		t.Errorf("observations with mini2 and tiny loaded: %v", obs)
	}
	generate(t, url, "mini")
	warm, obs := conditions.SplitObserved(Detect(ctx, tg, "mini"))
	if obs.Value(observed+"loaded") != "true" {
		t.Errorf("warm observations %v: want mini loaded", obs)
	}
	for name, s := range map[string]conditions.Set{"two others loaded": others, "warm": warm} {
		if d := conditions.Diff(cold, s, nil); len(d) != 0 {
			t.Errorf("mini cold vs %s: conditions differ: %+v", name, d)
		}
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
