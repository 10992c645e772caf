package detect

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"servebench/client"
)

// TestAPI serves each family's discovery answer (abridged from the real servers) and checks
// the family found; a server answering none of them is OpenAI-compatible.
func TestAPI(t *testing.T) {
	for _, tc := range []struct{ path, body, want string }{
		{"/api/version", `{"version":"0.17.4"}`, "ollama"},
		{"/info", `{"model_id":"meta-llama/Llama-3.1-8B","max_input_tokens":4095,"version":"3.0.1"}`, "tgi"},
		{"/props", `{"default_generation_settings":{"n_ctx":2048},"total_slots":4}`, "llamacpp"},
		{"/get_model_info", `{"model_path":"Qwen/Qwen2.5-7B","is_generation":true}`, "sglang"},
		{"/v2", `{"name":"triton","version":"2.49.0","extensions":["generate"]}`, "triton"},
		{"/v1/models", `{"data":[{"id":"m","owned_by":"vllm"}]}`, Fallback},
		{"/info", `not json`, Fallback},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != tc.path {
				http.NotFound(w, r)
				return
			}
			w.Write([]byte(tc.body))
		}))
		if got := API(context.Background(), client.Target{BaseURL: srv.URL + "/v1"}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.path, got, tc.want)
		}
		srv.Close()
	}
}
