package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"servebench/client/ndjson"
	"servebench/client/sse"
)

// EventBackend is a Backend for a server whose answer is a stream of events read by an
// EventDecoder (SSE or NDJSON). The native backends differ only in where they POST, how
// they build the body, how the stream is framed and how one event is decoded; the rest is
// Exchange and ReadEvents. It is safe for concurrent use; set its fields before the first Do.
type EventBackend struct {
	// IdleTimeout aborts a request, as class timeout, when no bytes arrive for this long.
	IdleTimeout time.Duration

	Target  Target
	Path    string                         // e.g. "/completion"
	Accept  string                         // "text/event-stream" or "application/x-ndjson"
	Body    func(*Request) ([]byte, error) // the JSON request body
	Frames  func(io.Reader) Frames         // the stream's framing (SSE or NDJSON reader)
	Decoder func() EventDecoder            // a decoder for one stream
}

var _ Backend = (*EventBackend)(nil)

// Shape is one event-stream API as its backend package declares it: where it POSTs, the body
// it sends and how it decodes one event. That is all that differs between the native
// backends; the URL check, transport, framing, stamping and error classes are EventBackend's.
type Shape struct {
	API     string                         // the --api name, for messages
	Path    string                         // e.g. "/completion"
	NDJSON  bool                           // the answer is newline-delimited JSON, not server-sent events
	Body    func(*Request) ([]byte, error) // the JSON request body
	Decoder func() EventDecoder            // a decoder for one stream
}

// New returns the EventBackend of shape s on target t; a base URL that is not http or https
// is an error naming s.API.
func (s Shape) New(t Target) (*EventBackend, error) {
	if err := t.CheckURL(s.API); err != nil {
		return nil, err
	}
	b := &EventBackend{Target: t, Path: s.Path, Accept: "text/event-stream", Body: s.Body, Frames: SSEFrames,
		Decoder: s.Decoder}
	if s.NDJSON {
		b.Accept, b.Frames = "application/x-ndjson", NDJSONFrames
	}
	return b, nil
}

// Backend is s as a registry entry's constructor: s.New(t) with opt applied.
func (s Shape) Backend(t Target, opt Options) (Backend, error) { return opt.Native(s.New(t)) }

// SSEFrames reads a stream as server-sent events (an EventBackend's Frames).
func SSEFrames(r io.Reader) Frames { return sse.NewReader(r) }

// NDJSONFrames reads a stream as newline-delimited JSON (an EventBackend's Frames).
func NDJSONFrames(r io.Reader) Frames { return ndjson.NewReader(r) }

// EncodeBody is the JSON body of req built as v; api names the backend in the error.
func EncodeBody(api string, req *Request, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request %d: %w", api, req.ID, err)
	}
	return b, nil
}

// Do sends req and streams the answer to obs; see Exchange.
func (b *EventBackend) Do(ctx context.Context, req *Request, obs Observer) error {
	body, err := b.Body(req)
	if err != nil {
		return err
	}
	x := Exchange{Target: b.Target, Path: b.Path, Body: body, Accept: b.Accept, IdleTimeout: b.IdleTimeout,
		RequestID: req.RequestID, TraceParent: req.TraceParent,
		SessionHeader: req.SessionHeader, SessionKey: req.SessionKey, Read: func(ctx context.Context, r io.Reader, o Observer) error {
			return ReadEvents(ctx, b.Target, b.Frames(r), b.Decoder(), o)
		}}
	return x.Do(ctx, obs)
}

// MaxTokenCount bounds a token count a server reports: no context window comes near it, and
// a larger value (1e23, an overflowed counter) is garbage that would swamp every throughput
// figure. It also keeps per-event counts within record.Event's int32. Every backend refuses
// a count outside [0, MaxTokenCount] as a decode error naming the field.
const MaxTokenCount = 1 << 30
