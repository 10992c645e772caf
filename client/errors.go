package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"servebench/record"
)

// MaxErrorBody is how much of an error response body is read for its message: enough for
// any server's JSON error, and bounded so a misbehaving server cannot stall the client.
const MaxErrorBody = 4 << 10

// maxMessage bounds a message kept in a record.
const maxMessage = 1 << 10

// StatusClass maps a non-2xx HTTP status to an error class. 429 is its own class because
// rate limiting is a load condition, not a malformed request. Statuses below 400 that are not
// success (an unfollowed redirect, say) are client-side problems and count as http_4xx.
func StatusClass(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return record.ErrRateLimited
	case status >= 500:
		return record.ErrHTTP5xx
	default:
		return record.ErrHTTP4xx
	}
}

// ResponseError reads at most MaxErrorBody bytes of a failed response and returns it as a
// classified Error carrying the server's own message, with t's API key redacted.
func ResponseError(t Target, resp *http.Response) *Error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	msg := ErrorMessage(b)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &Error{Class: StatusClass(resp.StatusCode), Status: resp.StatusCode, Msg: t.Redact(msg)}
}

// ErrorMessage extracts a human message from an error body, trying the shapes servers use:
// {"error": {"message": ...}} (OpenAI, vLLM), {"error": "..."} (TGI, Ollama), {"message": ...},
// {"detail": ...} (FastAPI), a JSON string, and finally the text itself. The result is one
// line, at most 1 KiB.
func ErrorMessage(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) == nil {
		if m := messageOf(v); m != "" {
			return oneLine(m)
		}
	}
	return oneLine(string(body))
}

// messageOf digs the message out of a decoded JSON error value.
func messageOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		for _, k := range []string{"error", "message", "detail", "msg"} {
			if m := messageOf(v[k]); m != "" {
				return m
			}
		}
		return ""
	case nil:
		return ""
	default: // FastAPI validation details are lists of objects: keep them as JSON
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// oneLine collapses whitespace runs (newlines included) and bounds the length, so a message
// fits in one record field and one terminal line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ErrIdleTimeout is the cancellation cause set by an IdleTimer: no bytes arrived in time.
var ErrIdleTimeout = errors.New("idle timeout")

// ContextError classifies a failure that happened while ctx was done: the idle-stream timer
// and deadlines are class timeout, any other cancellation is class cancelled. It returns nil
// when ctx is not done, so the caller classifies err itself.
func ContextError(ctx context.Context, t Target, err error) *Error {
	if ctx.Err() == nil {
		return nil
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrIdleTimeout):
		return &Error{Class: record.ErrTimeout, Msg: t.Redact(cause.Error())}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Class: record.ErrTimeout, Msg: t.Redact(fmt.Sprintf("request deadline exceeded: %v", err))}
	default:
		return &Error{Class: record.ErrCancelled, Msg: t.Redact(fmt.Sprintf("request cancelled: %v", cause))}
	}
}

// TransportError classifies an error from http.Client.Do (no response headers yet): a
// context error when ctx is done, otherwise class connect.
func TransportError(ctx context.Context, t Target, err error) *Error {
	if e := ContextError(ctx, t, err); e != nil {
		return e
	}
	return &Error{Class: record.ErrConnect, Msg: t.Redact(err.Error())}
}
