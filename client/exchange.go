package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

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
	TraceParent string        // sent as traceparent when set (see Request.TraceParent)
	// SessionHeader carries SessionKey when both are set (see Request.SessionHeader)
	SessionHeader, SessionKey string
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
	hreq, err := x.Target.NewRequest(o.WithClientTrace(withoutRedirects(ctx)), http.MethodPost, x.Path, bytes.NewReader(x.Body))
	if err != nil {
		return errors.New(x.Target.Redact(err.Error()))
	}
	hreq.Header.Set("Accept", x.Accept)
	SetRequestID(hreq.Header, x.RequestID)
	SetHeader(hreq.Header, TraceParentHeader, x.TraceParent)
	if x.SessionHeader != "" {
		SetHeader(hreq.Header, x.SessionHeader, x.SessionKey)
	}
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
	if e := x.check(resp, acceptsGzip(hreq.Header)); e != nil {
		return e
	}
	body := idle.Reader(resp.Body)
	if contentEncoding(resp) == "gzip" { // asked for (check refused it otherwise)
		gz, err := gzip.NewReader(body)
		if err != nil {
			if e := ContextError(ctx, x.Target, err); e != nil {
				return e
			}
			return &Error{Class: record.ErrDecode, Status: resp.StatusCode, Msg: "Content-Encoding gzip: " + err.Error()}
		}
		body = gz
	}
	if err := x.Read(ctx, body, o); err != nil {
		return err
	}
	Drain(resp.Body, cancel)
	return nil
}

// check returns the error a response stands for before its stream is read, or nil:
//   - a redirect is not followed (see withoutRedirects) and names where it pointed;
//   - any other non-2xx status is the server's error;
//   - a Content-Encoding is refused unless it is gzip and gzip was asked for: servebench
//     never asks by itself (compression buffers events and hides their arrival times), so a
//     server that compresses anyway is not measured as if it streamed;
//   - a body that is not a stream (a proxy's HTML page, a JSON answer from a server that
//     ignored "stream") carries no timings: a decode error naming its type and its first bytes,
//     or the server's own message when it is a JSON error object.
func (x *Exchange) check(resp *http.Response, gzipOK bool) *Error {
	switch {
	case resp.StatusCode/100 == 3:
		return RedirectError(x.Target, resp)
	case resp.StatusCode/100 != 2:
		return ResponseError(x.Target, resp)
	}
	if enc := contentEncoding(resp); enc != "" && (enc != "gzip" || !gzipOK) {
		return &Error{Class: record.ErrDecode, Status: resp.StatusCode,
			Msg: fmt.Sprintf("server sent Content-Encoding %s that was not asked for", oneLine(excerpt([]byte(enc), 40)))}
	}
	raw := resp.Header.Get("Content-Type")
	ct, _, err := mime.ParseMediaType(raw)
	if err != nil && raw != "" {
		ct = raw
	}
	if raw == "" || ct == x.Accept || streamTypes[strings.ToLower(ct)] {
		return nil
	}
	what := "a stream"
	if x.Accept == "text/event-stream" {
		what = "an event stream"
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	msg := fmt.Sprintf("expected %s, got %s: %s", what, oneLine(excerpt([]byte(ct), 80)), excerpt(b, bodyExcerpt))
	if isJSON(ct) {
		if m := jsonErrorMessage(b); m != "" {
			msg = fmt.Sprintf("expected %s, got %s with the server's error: %s", what, ct, m)
		} else {
			msg = fmt.Sprintf("expected %s, got %s (did the server ignore \"stream\"?): %s", what, ct, excerpt(b, bodyExcerpt))
		}
	}
	return &Error{Class: record.ErrDecode, Status: resp.StatusCode, Msg: x.Target.Redact(oneLine(msg))}
}

// streamTypes are the content types a stream is read from, whichever framing the backend
// asked for: servers label streams loosely (llama.cpp, vLLM, SGLang, TGI and Triton send
// text/event-stream, Ollama application/x-ndjson; a handler that sets none gets Go's sniffed
// text/plain, some proxies say application/octet-stream), and a body in the wrong framing
// still fails on its first payload. A response with no Content-Type at all is read too. Every
// other type (text/html, application/json, XML, images) is not a stream.
var streamTypes = map[string]bool{
	"text/event-stream": true, "application/x-ndjson": true, "application/ndjson": true,
	"application/jsonl": true, "application/x-jsonlines": true, "application/jsonlines": true,
	"application/stream+json": true, "application/json-seq": true, "application/x-json-stream": true,
	"text/plain": true, "application/octet-stream": true,
}

// bodyExcerpt is how much of an unexpected body a message quotes.
const bodyExcerpt = 200

func isJSON(ct string) bool {
	ct = strings.ToLower(ct)
	return ct == "application/json" || strings.HasSuffix(ct, "+json")
}

// jsonErrorMessage is the message of a JSON error object ({"error": ...}, {"message": ...},
// {"detail": ...}), or "" when b is some other JSON (a whole non-streamed answer, say).
func jsonErrorMessage(b []byte) string {
	var v map[string]any
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	if m := messageOf(v); m != "" {
		return oneLine(m)
	}
	return ""
}

// excerpt is the first n bytes of b as printable text: cut on a rune boundary, invalid UTF-8
// and control characters (a binary or compressed body) shown as '?', so that the message is
// one readable line in a record.
func excerpt(b []byte, n int) string {
	more := len(b) > n
	if more {
		cut := n
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b = b[:cut]
	}
	s := strings.Map(func(r rune) rune {
		if r == utf8.RuneError || r == 0x7f || (r < ' ' && r != '\t' && r != '\n' && r != '\r') {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(string(b), "?"))
	if more {
		s += "…"
	}
	return s
}

// contentEncoding is the response's Content-Encoding, lower case, "" for none or identity.
func contentEncoding(resp *http.Response) string {
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if enc == "identity" {
		return ""
	}
	return enc
}

// acceptsGzip reports whether a request's Accept-Encoding (only ever the user's --header:
// the transport adds none) offers gzip. Go's transport then leaves the body compressed, so
// Exchange decompresses it; event times are then when decompressed bytes were read, after
// whatever buffering the server's compressor added.
func acceptsGzip(h http.Header) bool {
	for _, v := range h.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0" {
				return true
			}
		}
	}
	return false
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
		isErr := string(f.Type()) == "error"
		if len(data) == 0 && !isErr {
			continue // keep-alive; an error line says something even when it is empty
		}
		o.EventRead() // stamp first: decoding time is the client's, not the server's
		events++
		if isErr {
			msg := ErrorMessage(data)
			if len(data) == 0 {
				msg = "the server sent an error event with no message"
			}
			return &Error{Class: record.ErrStreamErrorEvent, Msg: t.Redact(msg)}
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
