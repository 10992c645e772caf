// Package llamacpp is the backend for llama.cpp's native completion API: POST /completion
// with "n_predict", an SSE stream of
//
//	data: {"content":" the","tokens":[356],"stop":false,"tokens_predicted":2,"tokens_evaluated":3}
//
// Each event lists the token ids it carries, so per-event token counts are exact (several
// under speculative decoding). The final event has "stop": true, the counts
// (tokens_evaluated includes the BOS token) and llama.cpp's own "timings", reported as
// server figures "timings.<key>" exactly as the OpenAI backend reports them. No [DONE].
//
// A failure during generation arrives inside the 200 stream as an SSE line of its own field,
// `error: {"code":500,"message":"...","type":"server_error"}`; package sse reads it as an
// "error" event, which client.ReadEvents classes stream_error_event with the message.
package llamacpp

import (
	"encoding/json"
	"fmt"
	"sort"

	"servebench/client"
)

// API is the name accepted by --api.
const API = "llamacpp"

// Shape is llama.cpp's native /completion: its request body and its event decoder.
var Shape = client.Shape{API: API, Path: "/completion", Body: body, Decoder: func() client.EventDecoder { return &decoder{} }}

// body builds the request: n_predict caps the output, ignore_eos makes it exact.
func body(req *client.Request) ([]byte, error) {
	m := map[string]any{"prompt": client.PromptText(req), "stream": true}
	if req.Model != "" {
		m["model"] = req.Model // ignored by a single-model server, used by llama-swap style routers
	}
	if n := req.OutputTokens; n > 0 {
		m["n_predict"] = n
		if req.FixedOutput {
			m["ignore_eos"] = true
		}
	}
	req.Sampling.Put(m)
	req.Sampling.Extra(m) // the user's keys win
	return client.EncodeBody("llamacpp", req, m)
}

// event is one stream event.
type event struct {
	Content         string             `json:"content"`
	Tokens          *[]json.RawMessage `json:"tokens"`
	Stop            bool               `json:"stop"`
	TokensPredicted int                `json:"tokens_predicted"`
	TokensEvaluated int                `json:"tokens_evaluated"`
	Timings         map[string]any     `json:"timings"`
	Error           json.RawMessage    `json:"error"`
}

// decoder implements client.EventDecoder for one stream.
type decoder struct {
	events    int
	pending   int // tokens of events that carried no text yet (a UTF-8 character cut in two)
	predicted int // tokens_predicted of the last event
	done      bool
}

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
	for _, c := range []struct {
		name string
		v    int
	}{{"tokens_predicted", ev.TokensPredicted}, {"tokens_evaluated", ev.TokensEvaluated}} {
		if c.v < 0 || c.v > client.MaxTokenCount {
			return false, client.DecodeError(d.events, fmt.Errorf("%s = %d is not a token count", c.name, c.v), data)
		}
	}
	o.Choice()
	// tokens listed by this event; older servers list none, then the growth of the running
	// tokens_predicted says it
	n := 0
	if ev.Tokens != nil {
		n = len(*ev.Tokens)
	} else if ev.TokensPredicted > d.predicted {
		n = ev.TokensPredicted - d.predicted
	}
	d.predicted = max(d.predicted, ev.TokensPredicted)
	d.pending += n
	if ev.Content != "" {
		o.Content(d.pending)
		d.pending = 0
	}
	if !ev.Stop {
		return false, nil
	}
	d.done = true
	if ev.TokensPredicted > 0 || ev.TokensEvaluated > 0 {
		o.Usage(ev.TokensEvaluated, ev.TokensPredicted)
	}
	reportTimings(ev.Timings, o)
	return true, nil
}

// reportTimings passes on every numeric field of "timings", in key order.
func reportTimings(t map[string]any, o client.Observer) {
	keys := make([]string, 0, len(t))
	for k, v := range t {
		if _, ok := v.(float64); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.Server("timings."+k, t[k].(float64))
	}
}

// Finished implements client.EventDecoder: only "stop": true ends a stream cleanly.
func (d *decoder) Finished() bool { return d.done }
