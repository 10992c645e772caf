// Package apis holds servebench's one table of API backends (the values of --api) and the
// functions the CLI resolves --api with. It is the only package that imports every backend:
// client cannot (each backend imports client), so client defines the entry type and the
// table's behaviour (client.Registry) and this package holds the entries. A new backend is a
// new package under client/ plus one line in table.
//
// Aliases, each naming exactly one API:
//
//	openai, vllm              → openai-completions (vLLM's benchmark calls /v1/completions "openai"; vLLM serves it)
//	ollama-generate           → ollama (the pair of ollama-chat)
//	text-generation-inference → tgi
//	llama.cpp                 → llamacpp (the project's own spelling)
//	tensorrt-llm              → triton (TensorRT-LLM is served through Triton's generate extension)
//
// "chat" and "completions" are not aliases: Ollama has both kinds too, so they would be guesses.
package apis

import (
	"context"

	"servebench/client"
	"servebench/client/anthropic"
	"servebench/client/llamacpp"
	"servebench/client/ollama"
	"servebench/client/openai"
	"servebench/client/pooling"
	"servebench/client/responses"
	"servebench/client/sglang"
	"servebench/client/tgi"
	"servebench/client/triton"
)

// table is the registry, in help order. The order is also the order of the --api auto
// probes, and it matters where servers overlap: the simulator and vLLM answer none of them;
// llama.cpp answers /props only; SGLang's /get_model_info and TGI's /info are distinct;
// Triton answers /v2 with its server metadata; Ollama /api/version. The first entry is the
// fallback when no probe matches: every server we know also speaks OpenAI completions (vLLM
// is recognised this way too).
var table = client.Registry{
	{Name: openai.APICompletions, Aliases: []string{"openai", "vllm"}, New: openaiAPI(openai.APICompletions),
		Reports: client.Reports{Usage: true, Figures: true}},
	{Name: openai.APIChat, Chat: true, New: openaiAPI(openai.APIChat),
		Reports: client.Reports{Usage: true, Figures: true}},
	{Name: responses.API, Chat: true, Reports: client.Reports{Usage: true, Figures: true},
		New: responses.Shape.Backend},
	{Name: ollama.APIGenerate, Aliases: []string{"ollama-generate"}, Probe: &client.Probe{Path: "/api/version", Key: "version"},
		Reports: client.Reports{Usage: true, Figures: true, NoTokenizer: true},
		New:     ollamaAPI(ollama.APIGenerate)},
	{Name: ollama.APIChat, Chat: true, Reports: client.Reports{Usage: true, Figures: true, NoTokenizer: true},
		New: ollamaAPI(ollama.APIChat)},
	{Name: tgi.API, Aliases: []string{"text-generation-inference"}, Probe: &client.Probe{Path: "/info", Key: "model_id"},
		Reports: client.Reports{Usage: true},
		New:     tgi.Shape.Backend},
	{Name: llamacpp.API, Aliases: []string{"llama.cpp"}, Probe: &client.Probe{Path: "/props", Key: "default_generation_settings"},
		Reports: client.Reports{Usage: true, Figures: true},
		New:     llamacpp.Shape.Backend},
	{Name: sglang.API, Probe: &client.Probe{Path: "/get_model_info", Key: "model_path"},
		Reports: client.Reports{Usage: true, Figures: true},
		New:     sglang.Shape.Backend},
	{Name: triton.API, Aliases: []string{"tensorrt-llm"}, Probe: &client.Probe{Path: "/v2", Key: "extensions"}, NeedsModel: true,
		Reports: client.Reports{NoTokenizer: true},
		New: func(t client.Target, o client.Options) (client.Backend, error) {
			return o.Native(triton.New(t, o.Model))
		}},
	// The endpoints below are never detected: a server that serves them also serves
	// generation (llama.cpp, vLLM), and which one to measure is the user's choice.
	{Name: anthropic.API, Chat: true, Reports: client.Reports{Usage: true}, New: anthropic.New},
	{Name: pooling.APIEmbeddings, Reports: client.Reports{Usage: true}, New: pooling.Embeddings},
	{Name: pooling.APIRerank, Reports: client.Reports{Usage: true}, New: pooling.Rerank},
}

// openaiAPI is the constructor of an OpenAI-compatible API; openai.Backend is not an
// EventBackend (it reads its own stream), so Options.Native does not fit it.
func openaiAPI(api string) func(client.Target, client.Options) (client.Backend, error) {
	return func(t client.Target, o client.Options) (client.Backend, error) {
		b, err := openai.New(t, api)
		if err != nil {
			return nil, err
		}
		b.IdleTimeout = o.IdleTimeout
		return b, nil
	}
}

// ollamaAPI is the constructor of one of Ollama's two native APIs.
func ollamaAPI(api string) func(client.Target, client.Options) (client.Backend, error) {
	return func(t client.Target, o client.Options) (client.Backend, error) { return o.Native(ollama.New(t, api)) }
}

// Table returns a copy of the registry, for callers that list entries (help with aliases) or
// extend it (tests with a toy backend).
func Table() client.Registry { return append(client.Registry(nil), table...) }

// Names returns the values of --api in help order, "auto" last.
func Names() []string { return table.Names() }

// Lookup returns the API named name or having it as an alias; "auto" is not an API.
func Lookup(name string) (client.API, bool) { return table.Lookup(name) }

// Canonical returns the canonical name of name ("auto" stays "auto"), or an error wrapping
// client.ErrUnknownAPI that lists the valid names.
func Canonical(name string) (string, error) { return table.Canonical(name) }

// IsChat reports whether the API name sends chat messages, so the workload is built as chat.
func IsChat(name string) bool { return table.IsChat(name) }

// New builds the backend of the API name on target t with opt (the idle timeout; the model
// for Triton, which addresses it in the URL). Errors wrap client.ErrUnknownAPI or
// client.ErrModelRequired where those are the reason.
func New(t client.Target, name string, opt client.Options) (client.Backend, error) {
	return table.New(t, name, opt)
}

// Detect returns the API the server at t speaks, for --api auto: the first family whose probe
// it answers, else openai-completions. It never fails; each probe is bounded by two seconds.
func Detect(ctx context.Context, t client.Target) string { return table.Detect(ctx, t) }
