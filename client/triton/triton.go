// Package triton is the backend for NVIDIA Triton's generate extension, as served for
// TensorRT-LLM: POST /v2/models/{model}/generate_stream with "text_input" and "max_tokens",
// an SSE stream of
//
//	data: {"model_name":"ensemble","model_version":"1","text_output":" the"}
//
// Triton reports no token counts and sends no end marker: a clean end of the body after at
// least one event is a complete answer, and output lengths are counted one per event
// (source "count") unless a tokenizer counts them.
package triton

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"servebench/client"
	"servebench/client/sse"
)

// API is the name accepted by New.
const API = "triton"

// Backend sends requests to one Triton model. It is safe for concurrent use; set its fields
// before the first Do.
type Backend struct {
	// IdleTimeout aborts a request, as class timeout, when no bytes arrive for this long.
	IdleTimeout time.Duration

	target client.Target
	path   string
}

var _ client.Backend = (*Backend)(nil)

// New returns a backend for model on target t. Triton addresses models by name in the path,
// so the model is required.
func New(t client.Target, model string) (*Backend, error) {
	if model == "" {
		return nil, errors.New("triton: a model name is required (--model, e.g. ensemble)")
	}
	if err := t.CheckURL("triton"); err != nil {
		return nil, err
	}
	return &Backend{target: t, path: "/v2/models/" + url.PathEscape(model) + "/generate_stream"}, nil
}

// Do sends req and streams the answer to obs; see client.Exchange.
func (b *Backend) Do(ctx context.Context, req *client.Request, obs client.Observer) error {
	body, err := body(req)
	if err != nil {
		return err
	}
	x := client.Exchange{Target: b.target, Path: b.path, Body: body, Accept: "text/event-stream",
		IdleTimeout: b.IdleTimeout, RequestID: req.RequestID, Read: func(ctx context.Context, r io.Reader, o client.Observer) error {
			return client.ReadEvents(ctx, b.target, sse.NewReader(r), &decoder{}, o)
		}}
	return x.Do(ctx, obs)
}

// body builds the request. The TensorRT-LLM ensemble takes ignore_eos for a fixed output.
func body(req *client.Request) ([]byte, error) {
	m := map[string]any{"text_input": client.PromptText(req), "stream": true}
	if n := req.OutputTokens; n > 0 {
		m["max_tokens"] = n
		if req.FixedOutput {
			m["ignore_eos"] = true
		}
	}
	req.Sampling.Put(m)
	req.Sampling.Extra(m) // the user's keys win
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("triton: encode request %d: %w", req.ID, err)
	}
	return b, nil
}

// event is one stream event.
type event struct {
	TextOutput *string         `json:"text_output"`
	Error      json.RawMessage `json:"error"`
}

// decoder implements client.EventDecoder for one stream.
type decoder struct{ events int }

// Event implements client.EventDecoder.
func (d *decoder) Event(data []byte, o client.Observer) (bool, *client.Error) {
	d.events++
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, client.DecodeError(d.events, err, data)
	}
	if e := client.ErrorPayload(ev.Error, data); e != nil {
		return false, e
	}
	if ev.TextOutput != nil {
		o.Choice()
		if *ev.TextOutput != "" {
			o.Content(0)
		}
	}
	return false, nil
}

// Finished implements client.EventDecoder: Triton has no end marker, so a clean end after
// at least one event is complete. A body with no event at all is truncated.
func (d *decoder) Finished() bool { return d.events > 0 }
