// Package openai is the backend for OpenAI-compatible streaming APIs: /v1/completions and
// /v1/chat/completions as served by vLLM, SGLang, llama.cpp, Ollama, TGI and others.
//
// What it measures follows METRICS.md: the Observer is told when the request was dispatched,
// when a new connection was made, when the request was written, when headers arrived, and
// when each stream event's bytes were read (before decoding); then what the event held.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"servebench/client"
	"servebench/record"
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
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	o := client.NewSerial(obs)
	defer o.Close()

	hreq, err := b.target.NewRequest(o.WithClientTrace(ctx), http.MethodPost, b.path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("openai: %s", b.target.Redact(err.Error()))
	}
	hreq.Header.Set("Accept", "text/event-stream")
	client.SetRequestID(hreq.Header, req.RequestID)
	// Mark the POST replayable (a zero-length value is not sent on the wire): net/http then
	// retries it when a kept-alive connection turns out to have been closed by the server
	// before any answer (llama.cpp closes after every stream, so reusing its connections
	// races with the close). Without this the race is recorded as a spurious connect failure.
	// Only a reused connection that gave no response byte is retried; `sent` is stamped again
	// at the retry's write, and the lost time stays visible in TTFT from dispatch.
	hreq.Header["X-Idempotency-Key"] = nil

	idle := client.StartIdleTimer(b.IdleTimeout, cancel)
	defer idle.Stop()
	o.Dispatched() // vLLM starts its timer here too: immediately before the HTTP client
	resp, err := b.target.Client().Do(hreq)
	if err != nil {
		return client.TransportError(ctx, b.target, err)
	}
	defer resp.Body.Close()
	o.Headers(resp.StatusCode)
	idle.Reset()
	if e := b.check(resp); e != nil {
		return e
	}
	if err := b.stream(ctx, idle.Reader(resp.Body), o); err != nil {
		return err
	}
	drain(resp.Body, cancel)
	return nil
}

// check returns the error a response stands for before its stream is read, or nil.
func (b *Backend) check(resp *http.Response) *client.Error {
	if resp.StatusCode/100 != 2 {
		return client.ResponseError(b.target, resp)
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" {
		// The server ignored "stream": a single JSON answer carries no event timings.
		e := client.ResponseError(b.target, resp)
		e.Class, e.Msg = record.ErrDecode, "expected an event stream, got application/json: "+e.Msg
		return e
	}
	return nil
}

// After [DONE] at most this much is read, for at most this long, before the body is closed.
const (
	maxDrain     = 64 << 10
	drainTimeout = time.Second
)

// drain reads what follows [DONE] (normally only the chunked-encoding terminator) so that
// net/http can reuse the connection: closing a body before its EOF closes the connection,
// and every next request then paid for a new one (seen against llama.cpp). The wait is
// bounded because a server may keep the stream open after [DONE]; Done is already stamped.
func drain(body io.Reader, cancel context.CancelCauseFunc) {
	t := time.AfterFunc(drainTimeout, func() { cancel(errDrain) })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, body, maxDrain)
}

var errDrain = errors.New("stream still open after [DONE]")

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
	if b.chat {
		m["messages"] = messages(req)
	} else {
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
	req.Sampling.Put(m)
	req.Sampling.Extra(m) // the user's keys win
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("openai: encode request %d: %w", req.ID, err)
	}
	return body, nil
}

// messages returns the chat messages of req; a prompt-only request becomes one user message,
// so a completions workload can be replayed against a chat endpoint.
func messages(req *client.Request) any {
	if len(req.Messages) > 0 || req.Prompt == "" {
		return req.Messages
	}
	return []map[string]string{{"role": "user", "content": req.Prompt}}
}
