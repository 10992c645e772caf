// Package detect finds which API family a server speaks (--api auto) from the endpoints it
// answers, before a run: each family has a discovery endpoint nobody else serves.
package detect

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"servebench/client"
)

// Fallback is the API chosen when no native family is recognised: every server we know
// also speaks OpenAI completions (vLLM is recognised this way too).
const Fallback = "openai-completions"

// probe is one discovery request and the JSON key whose presence identifies a family.
type probe struct {
	path, key, api string
}

// probes are tried in order. The order matters where servers overlap: the simulator and
// vLLM answer none of these; llama.cpp answers /props only; SGLang's /get_model_info and
// TGI's /info are distinct; Triton answers /v2 with its server metadata; Ollama /api/version.
var probes = []probe{
	{"/api/version", "version", "ollama"},
	{"/info", "model_id", "tgi"},
	{"/props", "default_generation_settings", "llamacpp"},
	{"/get_model_info", "model_path", "sglang"},
	{"/v2", "extensions", "triton"},
}

// API returns the API family of the server at t: "ollama", "tgi", "llamacpp", "sglang",
// "triton", or Fallback. It never fails: a probe that errors is simply not a match. Each
// probe is bounded by two seconds.
func API(ctx context.Context, t client.Target) string {
	for _, p := range probes {
		if has(ctx, t, p.path, p.key) {
			return p.api
		}
	}
	return Fallback
}

// has reports whether GET path answers 200 with a JSON object holding key.
func has(ctx context.Context, t client.Target, path, key string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := t.NewRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return false
	}
	resp, err := t.Client().Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var m map[string]json.RawMessage
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}
