package apis

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"servebench/client"
	"servebench/client/openai"
	"servebench/client/pooling"
)

// TestTable pins what users see and what --api auto does: the names in help order and the
// probes in the order they are tried (see table's comment for why that order).
func TestTable(t *testing.T) {
	if err := table.Validate(); err != nil {
		t.Fatal(err)
	}
	want := "openai-completions openai-chat openai-responses ollama ollama-chat tgi llamacpp sglang triton anthropic-messages openai-embeddings rerank auto"
	if got := strings.Join(Names(), " "); got != want {
		t.Errorf("Names = %s\nwant    %s", got, want)
	}
	var probes []string
	for _, a := range table {
		if a.Probe != nil {
			probes = append(probes, a.Name+" "+a.Probe.Path+" "+a.Probe.Key)
		}
	}
	wantProbes := []string{
		"ollama /api/version version",
		"tgi /info model_id",
		"llamacpp /props default_generation_settings",
		"sglang /get_model_info model_path",
		"triton /v2 extensions",
	}
	if !slices.Equal(probes, wantProbes) {
		t.Errorf("probes %q\nwant   %q", probes, wantProbes)
	}
}

func TestLookup(t *testing.T) {
	for in, want := range map[string]string{
		"openai-completions": "openai-completions", "openai": "openai-completions", "vllm": "openai-completions",
		"openai-chat": "openai-chat", "openai-responses": "openai-responses", "ollama": "ollama", "ollama-generate": "ollama", "ollama-chat": "ollama-chat",
		"tgi": "tgi", "text-generation-inference": "tgi", "llamacpp": "llamacpp", "llama.cpp": "llamacpp",
		"sglang": "sglang", "triton": "triton", "tensorrt-llm": "triton", "auto": "auto",
	} {
		if got, err := Canonical(in); got != want || err != nil {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, ok := Lookup("auto"); ok {
		t.Error(`Lookup("auto") found an entry`)
	}
	_, err := Canonical("chat")
	const msg = `unknown API "chat": want one of openai-completions, openai-chat, openai-responses, ollama, ollama-chat, tgi, llamacpp, sglang, triton, anthropic-messages, openai-embeddings, rerank, auto`
	if !errors.Is(err, client.ErrUnknownAPI) || err.Error() != msg {
		t.Errorf("Canonical(chat) error %v\nwant %s", err, msg)
	}
	var chat []string
	for _, n := range append(Names(), "openai", "nonsense") {
		if IsChat(n) {
			chat = append(chat, n)
		}
	}
	if strings.Join(chat, " ") != "openai-chat openai-responses ollama-chat anthropic-messages" {
		t.Errorf("chat APIs %q", chat)
	}
}

// TestNew builds every API through the registry and checks that the idle timeout reached
// the backend: the CLI's --idle-timeout depends on it.
func TestNew(t *testing.T) {
	tg := client.Target{BaseURL: "http://127.0.0.1:1"}
	opt := client.Options{Model: "ensemble", IdleTimeout: 7 * time.Second}
	names := Names()
	for _, name := range append(names[:len(names)-1], "vllm", "llama.cpp") { // all but auto, and aliases
		b, err := New(tg, name, opt)
		if err != nil {
			t.Fatalf("New(%s): %v", name, err)
		}
		var idle time.Duration
		switch b := b.(type) {
		case *openai.Backend:
			idle = b.IdleTimeout
		case *client.EventBackend:
			idle = b.IdleTimeout
		case *pooling.Backend:
			idle = b.IdleTimeout
		default:
			t.Fatalf("New(%s) is a %T", name, b)
		}
		if idle != opt.IdleTimeout {
			t.Errorf("New(%s): idle timeout %v", name, idle)
		}
	}
	if _, err := New(tg, "tensorrt-llm", client.Options{}); !errors.Is(err, client.ErrModelRequired) {
		t.Errorf("triton without a model: %v", err)
	}
	if _, err := New(tg, "auto", opt); err == nil || errors.Is(err, client.ErrUnknownAPI) {
		t.Errorf("New(auto): %v", err)
	}
	if _, err := New(tg, "vlm", opt); !errors.Is(err, client.ErrUnknownAPI) {
		t.Errorf("New(vlm): %v", err)
	}
	b, err := New(client.Target{BaseURL: "ftp://h"}, "tgi", opt)
	if err == nil || b != nil {
		t.Errorf("bad URL: %v, %v", b, err)
	}
}

// TestDetect serves each family's discovery answer (abridged from the real servers) and checks
// the family found; a server answering none of them is OpenAI-compatible.
func TestDetect(t *testing.T) {
	for _, tc := range []struct{ path, body, want string }{
		{"/api/version", `{"version":"0.17.4"}`, "ollama"},
		{"/info", `{"model_id":"meta-llama/Llama-3.1-8B","max_input_tokens":4095,"version":"3.0.1"}`, "tgi"},
		{"/props", `{"default_generation_settings":{"n_ctx":2048},"total_slots":4}`, "llamacpp"},
		{"/get_model_info", `{"model_path":"Qwen/Qwen2.5-7B","is_generation":true}`, "sglang"},
		{"/v2", `{"name":"triton","version":"2.49.0","extensions":["generate"]}`, "triton"},
		{"/v1/models", `{"data":[{"id":"m","owned_by":"vllm"}]}`, "openai-completions"},
		{"/info", `not json`, "openai-completions"},
	} {
		srv := httptest.NewServer(answer(tc.path, tc.body))
		if got := Detect(context.Background(), client.Target{BaseURL: srv.URL + "/v1"}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.path, got, tc.want)
		}
		srv.Close()
	}
}

// answer is a server that answers body on path and 404 elsewhere.
func answer(path, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(body))
	}
}
