package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"servebench/client/ndjson"
	"servebench/client/sse"
	"servebench/record"
)

// Exchange is one streamed POST, the part of a request every native backend shares: the
// clock moments (dispatch, connect, write, headers), the idle-stream timer, classification of
// transport and HTTP failures, and draining the body so its connection can be reused. The
// backend supplies only the body and a Read function for its wire format.
type Exchange struct {
	Target      Target
	Path        string        // e.g. "/api/generate"
	Body        []byte        // JSON request body
	Accept      string        // Accept header, e.g. "text/event-stream"
	IdleTimeout time.Duration // see IdleTimer; 0 disables it
	RequestID   string        // sent as X-Request-Id when set (see Request.RequestID)
	// Read reads the response body to the end of the stream, reporting to o. It returns a
	// *Error for a failed request.
	Read func(ctx context.Context, body io.Reader, o Observer) error
}

// Do sends the exchange and streams its answer to obs. Observer calls are serialized and
// none happen after Do returns (see Serial).
func (x *Exchange) Do(ctx context.Context, obs Observer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	o := NewSerial(obs)
	defer o.Close()
	hreq, err := x.Target.NewRequest(o.WithClientTrace(ctx), http.MethodPost, x.Path, bytes.NewReader(x.Body))
	if err != nil {
		return errors.New(x.Target.Redact(err.Error()))
	}
	hreq.Header.Set("Accept", x.Accept)
	SetRequestID(hreq.Header, x.RequestID)
	// Mark the POST replayable (a zero-length value is not sent on the wire): net/http then
	// retries it when a kept-alive connection turns out to have been closed by the server
	// before any answer (llama.cpp closes after every stream, so reusing its connections
	// races with the close). Without this the race is recorded as a spurious connect failure.
	// Only a reused connection that gave no response byte is retried; Sent is stamped again at
	// the retry's write, and the lost time stays visible in TTFT from dispatch.
	hreq.Header["X-Idempotency-Key"] = nil
	idle := StartIdleTimer(x.IdleTimeout, cancel)
	defer idle.Stop()
	o.Dispatched()
	resp, err := x.Target.Client().Do(hreq)
	if err != nil {
		return TransportError(ctx, x.Target, err)
	}
	defer resp.Body.Close()
	o.Headers(resp.StatusCode)
	idle.Reset()
	if e := x.check(resp); e != nil {
		return e
	}
	if err := x.Read(ctx, idle.Reader(resp.Body), o); err != nil {
		return err
	}
	Drain(resp.Body, cancel)
	return nil
}

// check returns the error a response stands for before its stream is read, or nil. A JSON
// answer to a streaming request means the server ignored "stream": it carries no timings.
func (x *Exchange) check(resp *http.Response) *Error {
	if resp.StatusCode/100 != 2 {
		return ResponseError(x.Target, resp)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "application/json" && x.Accept != "application/json" {
		what := "a stream"
		if x.Accept == "text/event-stream" {
			what = "an event stream"
		}
		e := ResponseError(x.Target, resp)
		e.Class, e.Msg = record.ErrDecode, "expected "+what+", got application/json: "+e.Msg
		return e
	}
	return nil
}

// After the end of a stream at most this much is read, for at most this long, before the
// body is closed.
const (
	maxDrain     = 64 << 10
	drainTimeout = time.Second
)

var errDrain = errors.New("stream still open after its end")

// Drain reads what follows the end of a stream (normally only the chunked-encoding
// terminator) so that net/http can reuse the connection: closing a body before its EOF
// closes the connection. The wait is bounded because a server may keep the stream open;
// Done is already stamped.
func Drain(body io.Reader, cancel context.CancelCauseFunc) {
	t := time.AfterFunc(drainTimeout, func() { cancel(errDrain) })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, body, maxDrain)
}

// Frames is a stream of event payloads: an sse.Reader or an ndjson.Reader.
type Frames interface {
	Next() ([]byte, error)
	Type() []byte // the SSE event type; nil for NDJSON
}

// EventDecoder decodes the payloads of one native stream. A fresh one serves each request.
type EventDecoder interface {
	// Event decodes one payload (already stamped with EventRead) and reports it to o. It
	// returns end = true when the payload was the stream's last, or a *Error (class decode or
	// stream_error_event) that ends the request.
	Event(data []byte, o Observer) (end bool, err *Error)
	// Finished reports whether a clean end of input now is a complete answer (a final
	// object or finish reason was seen, or the format has no end marker).
	Finished() bool
}

// ReadEvents reads payloads from f until the stream ends, stamping each before decoding it
// with d. It classifies the end: an "error" SSE event or error payload is
// stream_error_event, a "[DONE]" or a payload d calls final is Done, a clean EOF is Done
// only when d.Finished, any other end before the final payload is truncated, and an end
// caused by our own context is timeout or cancelled.
func ReadEvents(ctx context.Context, t Target, f Frames, d EventDecoder, o Observer) error {
	events := 0
	for {
		data, err := f.Next()
		if err != nil {
			return endOfEvents(ctx, t, d, events, err, o)
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 {
			continue // keep-alive
		}
		o.EventRead() // stamp first: decoding time is the client's, not the server's
		events++
		if string(f.Type()) == "error" {
			return &Error{Class: record.ErrStreamErrorEvent, Msg: t.Redact(ErrorMessage(data))}
		}
		if string(data) == "[DONE]" {
			o.Done()
			return nil
		}
		end, e := d.Event(data, o)
		if e != nil {
			if u, ok := f.(interface{ Unterminated() bool }); ok && u.Unterminated() && e.Class == record.ErrDecode {
				// the input ended inside this line: a cut stream, not a malformed object
				e.Class = record.ErrTruncated
			}
			e.Msg = t.Redact(e.Msg)
			return e
		}
		if end {
			o.Done()
			return nil
		}
	}
}

// endOfEvents classifies a stream that ended before its final payload.
func endOfEvents(ctx context.Context, t Target, d EventDecoder, events int, err error, o Observer) error {
	if e := ContextError(ctx, t, err); e != nil {
		return e
	}
	switch {
	case err == io.EOF && d.Finished():
		o.Done()
		return nil
	case err == io.EOF:
		return &Error{Class: record.ErrTruncated, Msg: fmt.Sprintf("stream ended after %d events without its final object", events)}
	case errors.Is(err, sse.ErrEventTooLarge) || errors.Is(err, ndjson.ErrLineTooLarge):
		return &Error{Class: record.ErrDecode, Msg: fmt.Sprintf("after %d events: %v", events, err)}
	default:
		return &Error{Class: record.ErrTruncated, Msg: t.Redact(fmt.Sprintf("stream cut after %d events: %v", events, err))}
	}
}

// ErrorPayload reports whether a stream payload whose "error" member was raw is an error
// object (Ollama, TGI, Triton and SGLang send {"error": ...} inside a 200 stream), and returns
// it as a stream_error_event Error.
func ErrorPayload(raw []byte, data []byte) *Error {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `""` {
		return nil
	}
	return &Error{Class: record.ErrStreamErrorEvent, Msg: ErrorMessage(data)}
}

// PromptText is the text a native (prompt-only) API is sent for req: its prompt, or the
// contents of its chat messages one per line when the workload is chat-shaped. Native
// completion APIs apply no chat template, so prompt lengths of a chat workload sent to them
// are the text's, not the templated conversation's.
func PromptText(req *Request) string {
	if req.Prompt != "" || len(req.Messages) == 0 {
		return req.Prompt
	}
	var b bytes.Buffer
	for i, m := range req.Messages {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(m.Content)
	}
	return b.String()
}

// DecodeError is a decode-class Error for a payload that is not the JSON expected.
func DecodeError(event int, err error, data []byte) *Error {
	const n = 120
	ex := string(data)
	if len(ex) > n {
		ex = ex[:n] + "…"
	}
	return &Error{Class: record.ErrDecode, Msg: fmt.Sprintf("event %d: %v: %s", event, err, ex)}
}
