// Package sglang is the backend for SGLang's native API: POST /generate with
// "sampling_params", an SSE stream ended by [DONE]:
//
//	data: {"text":"Hello world","meta_info":{"prompt_tokens":5,"completion_tokens":2,"finish_reason":null}}
//
// "text" is cumulative (the whole output so far; only the new text with
// --incremental-streaming-output) and meta_info.completion_tokens is the running count, so
// each event's token count is the growth of that count. The final event's finish_reason is
// non-null; its numeric meta_info fields (e2e_latency, cached_tokens ...) are reported as
// server figures "meta_info.<key>". A finish_reason of type "abort" is a failure.
package sglang

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	"servebench/client"
	"servebench/record"
)

// API is the name accepted by --api.
const API = "sglang"

// Shape is SGLang's native /generate: its request body and its event decoder.
var Shape = client.Shape{API: API, Path: "/generate", Body: body, Decoder: func() client.EventDecoder { return &decoder{} }}

// body builds the request; a fixed output uses ignore_eos and min_new_tokens.
func body(req *client.Request) ([]byte, error) {
	sp := map[string]any{}
	if n := req.OutputTokens; n > 0 {
		sp["max_new_tokens"] = n
		if req.FixedOutput {
			sp["ignore_eos"], sp["min_new_tokens"] = true, n
		}
	}
	req.Sampling.Put(sp)
	m := map[string]any{"text": client.PromptText(req), "sampling_params": sp, "stream": true}
	req.Sampling.Extra(m) // the user's keys win
	return client.EncodeBody("sglang", req, m)
}

// event is one stream event.
type event struct {
	Text     *string         `json:"text"`
	MetaInfo map[string]any  `json:"meta_info"`
	Error    json.RawMessage `json:"error"`
}

// decoder implements client.EventDecoder for one stream.
type decoder struct {
	events      int
	prev        []byte // the text of the last event: new text is what extends it
	incremental bool   // the server sends each event's new text only (see newText)
	completion  int    // running completion_tokens
	pending     int    // tokens no content event has carried yet
	finished    bool
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
	if ev.Text == nil && ev.MetaInfo == nil {
		return false, nil
	}
	prompt, e1 := d.count(ev.MetaInfo, "prompt_tokens", data)
	completion, e2 := d.count(ev.MetaInfo, "completion_tokens", data)
	_, e3 := d.count(ev.MetaInfo, "cached_tokens", data)
	for _, e := range []*client.Error{e1, e2, e3} {
		if e != nil {
			return false, e
		}
	}
	o.Choice()
	// completion_tokens is the running count: its growth since the last event is this
	// event's tokens, carried to the next event with new text when this one has none (a
	// multi-byte character's first bytes held back, a special token), so the per-event
	// counts add up to completion_tokens and ITL (token) divides each gap over every token
	// generated in it. Tokens after the last text (end of sequence) are in the usage only.
	d.pending += max(completion-d.completion, 0)
	d.completion = max(d.completion, completion)
	if ev.Text != nil && d.newText(*ev.Text) {
		o.Content(d.pending)
		d.pending = 0
	}
	if completion > 0 {
		o.Usage(prompt, completion)
	}
	fr, ok := ev.MetaInfo["finish_reason"]
	if !ok || fr == nil {
		return false, nil
	}
	if e := abort(fr, d.events); e != nil {
		return false, e
	}
	d.finished = true
	reportMeta(ev.MetaInfo, o)
	return false, nil // the stream still ends with [DONE]
}

// newText reports whether text (an event's "text") holds generated text not seen before.
// By default SGLang sends the whole output so far, which grows at every event with new text
// and stays the same at one without (the detokenizer holds back an incomplete UTF-8
// character); with --incremental-streaming-output it sends only the new text. A text that
// does not extend the previous one shows the second form, and from then on every non-empty
// text is new. (Until then an incremental text equal to the previous one is taken for an
// unchanged cumulative one: two identical first pieces are rare, and either reading keeps
// the tokens, only the event's stamp would move.)
func (d *decoder) newText(text string) bool {
	switch {
	case text == "":
		return false
	case d.incremental:
		return true
	case len(text) > len(d.prev) && text[:len(d.prev)] == string(d.prev):
		d.prev = append(d.prev[:0], text...)
		return true
	case text == string(d.prev):
		return false
	}
	d.incremental = true
	return true
}

// count reads the token count key of meta_info: absent or null is 0; anything but a
// non-negative integer of sane size is a decode error naming the field.
func (d *decoder) count(m map[string]any, key string, data []byte) (int, *client.Error) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, nil
	}
	f, isNum := v.(float64)
	if !isNum || f != math.Trunc(f) || f < 0 || f > client.MaxTokenCount {
		return 0, client.DecodeError(d.events, fmt.Errorf("meta_info.%s = %v is not a token count", key, jsonValue(v)), data)
	}
	return int(f), nil
}

// jsonValue renders v as it was on the wire, for a message.
func jsonValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// abort returns the stream_error_event of a finish_reason of type "abort": the scheduler
// gave up on the request (out of memory, a bad request found late, /abort_request), said so
// with a message, and still ended the 200 stream in order. Counting it as finished would
// record a failure as a short success.
func abort(fr any, event int) *client.Error {
	m, ok := fr.(map[string]any)
	if !ok || m["type"] != "abort" {
		return nil
	}
	msg, _ := m["message"].(string)
	if msg == "" {
		msg = "the server aborted the request"
	}
	if code, ok := m["status_code"].(float64); ok {
		msg = fmt.Sprintf("%s (status_code %g)", msg, code)
	}
	return &client.Error{Class: record.ErrStreamErrorEvent, Msg: fmt.Sprintf("event %d: finish_reason abort: %s", event, msg)}
}

// reportMeta passes on every numeric meta_info field, in key order.
func reportMeta(m map[string]any, o client.Observer) {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if _, ok := v.(float64); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.Server("meta_info."+k, m[k].(float64))
	}
}

// Finished implements client.EventDecoder: an EOF after a finish_reason is complete.
func (d *decoder) Finished() bool { return d.finished }

// FlushCache empties the radix (prefix) cache of the SGLang server at t: POST /flush_cache,
// which SGLang refuses while requests are in flight. run and sweep --flush-cache call it
// before every run, so that no run is served from the cache an earlier one filled (an SGLang
// server serves its OpenAI-compatible APIs and /generate alike).
func FlushCache(ctx context.Context, t client.Target) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := t.NewRequest(ctx, http.MethodPost, "/flush_cache", nil)
	if err != nil {
		return fmt.Errorf("flush cache: %w", err)
	}
	resp, err := t.Client().Do(req)
	if err != nil {
		return fmt.Errorf("flush cache: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("flush cache: POST /flush_cache answered %s: %s (is the server SGLang, and idle?)",
			resp.Status, strings.TrimSpace(strings.ToValidUTF8(string(msg), "?")))
	}
	return nil
}
