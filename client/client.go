// Package client sends one request to an inference server and reports what happened on the
// wire to an Observer. It knows HTTP and wire formats, not metrics.
//
// Clock rule (docs/design/ARCHITECTURE.md): a backend never reads the clock. It calls the Observer at
// each moment of interest and the Observer stamps it. Stream events are reported with
// EventRead as soon as their bytes are read, before any JSON decoding, and the decoded facts
// (Choice, Content, Usage) follow and refer to that last event.
package client

import (
	"context"
	"fmt"
	"net/http"

	"servebench/workload"
)

// Observer receives the moments of one request. Implementations stamp each call with the
// monotonic clock. Calls come from the request's own goroutine, in order.
type Observer interface {
	Dispatched()                   // immediately before the request is handed to the HTTP client (may wait for its scheduled time)
	ConnectStart()                 // a new connection is being made (DNS/dial); not called on reuse
	ConnectDone()                  // the new connection is ready (after TLS when there is TLS)
	WroteRequest()                 // the request was completely written
	Headers(status int)            // response headers received
	EventRead()                    // the bytes of one stream event were read (stamp now)
	Choice()                       // the last event read had at least one choices entry
	Content(tokens int)            // the last event read carried generated text; tokens 0 = unknown
	Usage(prompt, completion int)  // the server's usage report (latest wins)
	Server(name string, v float64) // a figure the server reports about itself (e.g. llama.cpp timings)
	Done()                         // the stream ended normally ([DONE], final object, or clean EOF)
}

// Request is what a backend sends: a workload request plus target and sampling settings.
type Request struct {
	*workload.Request
	Model       string
	FixedOutput bool // ask for exactly OutputTokens (ignore_eos + min_tokens)
	Sampling    Sampling
	// RequestID, when set, is sent as the X-Request-Id header (unless the target's extra
	// headers set one): vLLM, SGLang and servebench's simulator adopt it as their own request
	// id, so a record can be matched with the server's log and with the simulator's truth log.
	RequestID string
	// TraceParent, when set, is sent as the W3C traceparent header (unless the target's extra
	// headers set one), so that a server exporting OpenTelemetry spans continues the
	// request's trace and its spans can be joined to the record (package spans). It is made
	// before the request is dispatched: nothing per request is computed between the
	// dispatch stamp and the write.
	TraceParent string
	// SessionKey is the request's session ("<run>-<session>" for a turn of a multi-turn
	// session, else empty). SessionHeader, when set, is a header that carries it (for a router
	// that keeps a session on one replica); the user's --header wins. The OpenAI completions
	// and chat backends also send it as the body's "user", a field the API defines (and
	// servers that do not use it ignore), so a capture proxy knows the session; the user's
	// extra body wins.
	SessionHeader, SessionKey string
	// ContinuousUsage asks an OpenAI-compatible server for usage on every chunk
	// (stream_options.continuous_usage_stats, vLLM's extension), which gives per-event token
	// counts and so ITL (token).
	ContinuousUsage bool
	// Media are the bytes of the workload request's media (Request.Media), made by the load
	// layer before the request is dispatched; the chat API sends them as content parts.
	MediaData []workload.Rendered
	// Tools are offered to the model with a chat request (tools.go); nil offers none.
	Tools *Tools
}

// RequestIDHeader is the header that carries Request.RequestID.
const RequestIDHeader = "X-Request-Id"

// SetRequestID sets the X-Request-Id header of h to id, unless id is empty or the user's
// extra headers already set it (an explicit --header wins).
func SetRequestID(h http.Header, id string) {
	if id != "" && h.Get(RequestIDHeader) == "" {
		h[RequestIDHeader] = []string{id}
	}
}

// TraceParentHeader is the header that carries Request.TraceParent.
const TraceParentHeader = "Traceparent"

// SetHeader sets header name (in canonical form) of h to v, unless v is empty or the
// user's extra headers already set it (an explicit --header wins).
func SetHeader(h http.Header, name, v string) {
	if v != "" && h.Get(name) == "" {
		h[name] = []string{v}
	}
}

// Sampling holds the sampling settings sent with every request.
type Sampling struct {
	Temperature *float64       `json:"temperature,omitempty" yaml:"temperature,omitempty"`
	TopP        *float64       `json:"top_p,omitempty" yaml:"top_p,omitempty"`
	ExtraBody   map[string]any `json:"extra_body,omitempty" yaml:"extra_body,omitempty"`
}

// Backend sends one request and streams its response to obs. A failed request is returned as
// an *Error with a class from record's fixed list; it is data, not a reason to stop the run.
type Backend interface {
	Do(ctx context.Context, req *Request, obs Observer) error
}

// Error is a classified request failure.
type Error struct {
	Class  string // one of record.ErrorClasses
	Status int    // HTTP status when known
	Msg    string
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", e.Class, e.Status, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Class, e.Msg)
}

// Target is where requests go and how they authenticate.
type Target struct {
	BaseURL string      // e.g. http://127.0.0.1:8000 (no trailing /v1)
	APIKey  string      // sent as "Authorization: Bearer ..."; never logged
	Header  http.Header // extra headers (--header K=V)
	HTTP    *http.Client
	// KeyHeader, when set, is the header APIKey is sent in, verbatim, instead of
	// Authorization (the Anthropic Messages API's x-api-key).
	KeyHeader string
}

// Put writes the sampling settings that are set (temperature, top_p) into m: the object where
// the server's API expects them (the top level, Ollama's "options", SGLang's
// "sampling_params", TGI's "parameters"). Unset ones are left to the server's defaults.
func (s Sampling) Put(m map[string]any) {
	if s.Temperature != nil {
		m["temperature"] = *s.Temperature
	}
	if s.TopP != nil {
		m["top_p"] = *s.TopP
	}
}

// Extra merges ExtraBody into m; the user's keys win over ours.
func (s Sampling) Extra(m map[string]any) {
	for k, v := range s.ExtraBody {
		m[k] = v
	}
}
