// Package tgi is the backend for Hugging Face Text Generation Inference's native API:
// POST /generate_stream, an SSE stream with one token object per event:
//
//	data:{"index":1,"token":{"id":1820,"text":" the","logprob":-0.4,"special":false},"generated_text":null,"details":null}
//
// Because every event names its token, the per-event token count is known exactly: one per
// event, carried to the next event with text when a token has none to show (a special token
// such as <|python_tag|>, or the first bytes of a multi-byte character). The last event has
// "generated_text" and "details" with generated_tokens (and input_length on TGI >= 2), which
// are reported as usage. TGI sends no [DONE].
package tgi

import (
	"encoding/json"
	"fmt"

	"servebench/client"
)

// API is the name accepted by --api.
const API = "tgi"

// Shape is TGI's /generate_stream: its request body and its event decoder.
var Shape = client.Shape{API: API, Path: "/generate_stream", Body: body, Decoder: func() client.EventDecoder { return &decoder{} }}

// body builds the request. TGI has no ignore_eos or min_tokens: a fixed-output workload is
// capped by max_new_tokens only. "details" asks for the final token counts.
func body(req *client.Request) ([]byte, error) {
	p := map[string]any{"details": true}
	if req.OutputTokens > 0 {
		p["max_new_tokens"] = req.OutputTokens
	}
	req.Sampling.Put(p)
	req.Sampling.Extra(p) // TGI keeps sampling inside "parameters"
	return client.EncodeBody("tgi", req, map[string]any{"inputs": client.PromptText(req), "parameters": p, "stream": true})
}

// event is one stream event.
type event struct {
	Token *struct {
		Text    string `json:"text"`
		Special bool   `json:"special"`
	} `json:"token"`
	GeneratedText *string `json:"generated_text"`
	Details       *struct {
		GeneratedTokens int `json:"generated_tokens"`
		InputLength     int `json:"input_length"`
	} `json:"details"`
	Error json.RawMessage `json:"error"`
}

// decoder implements client.EventDecoder for one stream.
type decoder struct {
	events  int
	pending int // tokens no content event has carried yet
	done    bool
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
	if ev.Token != nil {
		o.Choice()
		// A special token's text is markup, not generated text (TGI leaves it out of
		// generated_text), and an empty text is a character still incomplete: neither is a
		// content event, but the token is generated, so it is carried to the next content
		// event. The per-event counts then add up to generated_tokens (but for a final
		// end-of-sequence token, which no content event follows), and ITL (token) divides
		// each gap over every token generated in it instead of overstating it.
		d.pending++
		if !ev.Token.Special && ev.Token.Text != "" {
			o.Content(d.pending)
			d.pending = 0
		}
	}
	if ev.Details != nil {
		for _, c := range []struct {
			name string
			v    int
		}{{"details.generated_tokens", ev.Details.GeneratedTokens}, {"details.input_length", ev.Details.InputLength}} {
			if c.v < 0 || c.v > client.MaxTokenCount {
				return false, client.DecodeError(d.events, fmt.Errorf("%s = %d is not a token count", c.name, c.v), data)
			}
		}
		if ev.Details.GeneratedTokens > 0 {
			o.Usage(ev.Details.InputLength, ev.Details.GeneratedTokens)
		}
	}
	d.done = ev.GeneratedText != nil || ev.Details != nil
	return d.done, nil
}

// Finished implements client.EventDecoder.
func (d *decoder) Finished() bool { return d.done }
