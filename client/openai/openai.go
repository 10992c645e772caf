// Package openai is the backend for OpenAI-compatible streaming APIs: /v1/completions and
// /v1/chat/completions as served by vLLM, SGLang, llama.cpp, Ollama, TGI and others.
//
// What it measures follows docs/design/METRICS.md: the Observer is told when the request was dispatched,
// when a new connection was made, when the request was written, when headers arrived, and
// when each stream event's bytes were read (before decoding); then what the event held.
package openai

import (
	"context"
	"fmt"
	"time"

	"servebench/client"
)

// API names accepted by New.
const (
	APICompletions = "openai-completions" // POST /v1/completions with "prompt"
	APIChat        = "openai-chat"        // POST /v1/chat/completions with "messages"
)

// Backend sends requests to one OpenAI-compatible endpoint. It is safe for concurrent use;
// set its fields before the first Do.
type Backend struct {
	// IdleTimeout aborts a request, as class timeout, when no bytes arrive for this long,
	// counted from dispatch and re-armed by the headers and by every read. 0 disables it.
	IdleTimeout time.Duration

	target client.Target
	chat   bool
	path   string
}

var _ client.Backend = (*Backend)(nil)

// New returns a backend for api (APICompletions or APIChat) on target t.
func New(t client.Target, api string) (*Backend, error) {
	b := &Backend{target: t}
	switch api {
	case APICompletions:
		b.path = "/v1/completions"
	case APIChat:
		b.path, b.chat = "/v1/chat/completions", true
	default:
		return nil, fmt.Errorf("openai: unknown api %q (want %s or %s)", api, APICompletions, APIChat)
	}
	if err := t.CheckURL("openai"); err != nil {
		return nil, err
	}
	return b, nil
}

// Do sends req and streams the answer to obs. A failed request is returned as a
// *client.Error; any other error means the request could not be built (bad ExtraBody) and
// nothing was sent. Observer calls are serialized and none happen after Do returns (see
// client.Serial).
func (b *Backend) Do(ctx context.Context, req *client.Request, obs client.Observer) error {
	body, err := b.body(req)
	if err != nil {
		return err
	}
	// the shared streamed POST: stamps (vLLM also starts its timer at dispatch), the idle
	// timer, a replayable POST for servers that close kept-alive connections after every
	// stream (llama.cpp), failure classes, and draining after [DONE] for connection reuse
	x := client.Exchange{Target: b.target, Path: b.path, Body: body, Accept: "text/event-stream",
		IdleTimeout: b.IdleTimeout, RequestID: req.RequestID, TraceParent: req.TraceParent,
		SessionHeader: req.SessionHeader, SessionKey: req.SessionKey, Read: b.stream}
	return x.Do(ctx, obs)
}

// body builds the JSON request body. Keys are sorted by encoding/json, so the bytes sent for
// a workload request are stable from run to run.
func (b *Backend) body(req *client.Request) ([]byte, error) {
	so := map[string]any{"include_usage": true}
	if req.ContinuousUsage {
		so["continuous_usage_stats"] = true
	}
	m := map[string]any{"stream": true, "stream_options": so}
	if req.Model != "" {
		m["model"] = req.Model
	}
	switch {
	case b.chat && len(req.MediaData) > 0:
		m["messages"] = withMedia(req, messages(req))
	case b.chat:
		m["messages"] = messages(req)
	default:
		m["prompt"] = req.Prompt
	}
	if n := req.OutputTokens; n > 0 {
		// max_tokens, not max_completion_tokens: it is the key vLLM, SGLang, llama.cpp,
		// Ollama and TGI all accept on both endpoints.
		m["max_tokens"] = n
		if req.FixedOutput {
			m["ignore_eos"], m["min_tokens"] = true, n
		}
	}
	if req.SessionKey != "" {
		m["user"] = req.SessionKey // the session, for a capture proxy (client.Request.SessionKey)
	}
	putTools(m, req, b.chat) // tools.go
	req.Sampling.Put(m)
	req.Sampling.Extra(m) // the user's keys win
	return client.EncodeBody("openai", req, m)
}

// messages returns the chat messages of req; a prompt-only request becomes one user message,
// so a completions workload can be replayed against a chat endpoint.
func messages(req *client.Request) any {
	if len(req.Messages) > 0 || req.Prompt == "" {
		return req.Messages
	}
	return []map[string]string{{"role": "user", "content": req.Prompt}}
}
