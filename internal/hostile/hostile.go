// Package hostile is an HTTP server that misbehaves on purpose, for tests of how servebench
// takes whatever a server sends: each failure mode is one path prefix (Server.URL(mode) is a
// base URL to give --url), and under it the server speaks the OpenAI API well enough for a run
// to start (GET /health, GET /v1/models, POST /tokenize) before /v1/completions and
// /v1/chat/completions misbehave in the mode's way. Mode Good streams a correct answer.
//
// It listens on 127.0.0.1 only. Every wait it makes (stall, slow headers, endless headers) ends
// when the client goes away or the server is closed, so a test using it stays bounded.
package hostile

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"
)

// The modes, each a path prefix.
const (
	Good               = "good"                 // a correct stream: content chunks, usage, [DONE]
	HTML               = "html"                 // 200 text/html: a proxy's login page
	Gzip               = "gzip"                 // the good stream gzip-compressed, whether asked for or not
	NegativeUsage      = "negative_usage"       // usage with completion_tokens -100
	HugeUsage          = "huge_usage"           // usage with completion_tokens 10^23
	NaN                = "nan"                  // usage with completion_tokens NaN (not JSON)
	ErrorEvent         = "error_event"          // 200, one chunk, then an error event
	Disconnect         = "disconnect"           // two chunks, then the connection is cut
	Stall              = "stall"                // one chunk, then no byte until the client leaves
	SlowHeaders        = "slow_headers"         // no response headers until the client leaves
	Malformed          = "malformed"            // one chunk, then an event that is not JSON
	NoDone             = "no_done"              // a finished answer without [DONE] (a quirk, not a failure)
	NoEnd              = "no_end"               // chunks without a finish reason or [DONE], then EOF
	BigEvent           = "big_event"            // one content event of 2 MB
	TinyEvents         = "tiny_events"          // 10,000 one-character content events
	JSONBody           = "json"                 // 200 application/json: a whole non-streamed answer
	JSONError          = "json_error"           // 200 application/json: an error object
	EndlessHeaders     = "endless_headers"      // header lines that never end
	CloseBeforeHeaders = "close_before_headers" // the connection closed before any response byte
	Redirect           = "redirect"             // 307 to another host (Server.Thief), key and all
	Echo401            = "echo_401"             // 401 whose message echoes every credential it was sent
	EchoModel          = "echo_model"           // lists a model id made of the credentials it was sent; answers as Good
)

// Modes lists every mode.
var Modes = []string{Good, HTML, Gzip, NegativeUsage, HugeUsage, NaN, ErrorEvent, Disconnect, Stall,
	SlowHeaders, Malformed, NoDone, NoEnd, BigEvent, TinyEvents, JSONBody, JSONError, EndlessHeaders,
	CloseBeforeHeaders, Redirect, Echo401, EchoModel}

// Model is the one model the server lists.
const Model = "hostile-model"

// Sizes of the modes that send much.
const (
	BigEventBytes = 2 << 20
	TinyEventsN   = 10_000
	maxWait       = 30 * time.Second // the longest any wait lasts when nobody ends it
	maxHeaderPad  = 64 << 20         // endless headers stop here if the client never gives up
)

// Server is a running hostile server. Thief is the other host its redirects point to: it
// answers nothing useful and remembers the headers of every request that reached it.
type Server struct {
	*httptest.Server
	Thief *httptest.Server

	quit     chan struct{}
	quitOnce sync.Once
	mu       sync.Mutex
	stolen   []http.Header
}

// Start starts a hostile server and its thief on free ports of 127.0.0.1.
func Start() *Server {
	s := &Server{quit: make(chan struct{})}
	s.Thief = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.stolen = append(s.stolen, r.Header.Clone())
		s.mu.Unlock()
		http.Error(w, "thank you", http.StatusTeapot)
	}))
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close ends every wait in progress and stops both servers.
func (s *Server) Close() {
	s.quitOnce.Do(func() { close(s.quit) })
	s.Server.CloseClientConnections()
	s.Server.Close()
	s.Thief.Close()
}

// URL returns the base URL of mode, for --url.
func (s *Server) URL(mode string) string { return s.Server.URL + "/" + mode }

// Stolen returns the headers of the requests that reached the thief.
func (s *Server) Stolen() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.stolen...)
}

// serve routes /MODE/ENDPOINT.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	mode, endpoint, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	endpoint = "/" + endpoint
	switch {
	case r.Method == http.MethodGet && endpoint == "/health":
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	case r.Method == http.MethodGet && endpoint == "/v1/models":
		id := Model
		if mode == EchoModel { // a server that reflects what it was sent into what it reports
			id = "model-" + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + "-" + r.Header.Get("X-Api-Key")
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list",
			"data": []map[string]any{{"id": id, "object": "model", "owned_by": "hostile"}}})
	case r.Method == http.MethodPost && endpoint == "/tokenize":
		var req struct {
			Prompt string `json:"prompt"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		writeJSON(w, http.StatusOK, map[string]any{"count": len(strings.Fields(req.Prompt))})
	case r.Method == http.MethodPost && (endpoint == "/v1/completions" || endpoint == "/v1/chat/completions"):
		s.complete(w, r, mode, endpoint == "/v1/chat/completions")
	default:
		http.NotFound(w, r)
	}
}

// request is what the server reads of a completion request.
type request struct {
	MaxTokens int  `json:"max_tokens"`
	Stream    bool `json:"stream"`
}

// complete answers a completion request in mode's way.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, mode string, chat bool) {
	var req request
	_ = json.NewDecoder(r.Body).Decode(&req)
	n := max(req.MaxTokens, 1)
	st := &stream{chat: chat}
	switch mode {
	case Good, EchoModel:
		s.send(w, st.good(n, "4"))
	case HTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n<body><h1>Corporate proxy</h1><p>Please sign in to continue.</p></body></html>\n")
	case Gzip:
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(st.good(n, "4"))
		zw.Close()
		w.Header().Set("Content-Encoding", "gzip")
		s.send(w, b.Bytes())
	case NegativeUsage:
		s.send(w, st.good(n, "-100"))
	case HugeUsage:
		s.send(w, st.good(n, "100000000000000000000000"))
	case NaN:
		s.send(w, st.good(n, "NaN"))
	case ErrorEvent:
		b := st.chunk("Hello", "")
		b = append(b, `data: {"error":{"message":"engine crashed: CUDA out of memory","type":"InternalServerError","code":500}}`+"\n\n"...)
		s.send(w, append(b, "data: [DONE]\n\n"...))
	case Disconnect:
		s.send(w, append(st.chunk("Hello", ""), st.chunk(" world", "")...))
		panic(http.ErrAbortHandler) // net/http cuts the connection without the final chunk
	case Stall:
		s.send(w, st.chunk("Hello", ""))
		s.wait(r)
	case SlowHeaders:
		s.wait(r)
		s.send(w, st.good(n, "4"))
	case Malformed:
		s.send(w, append(st.chunk("Hello", ""), "data: {\"id\":\"broken\",\"choices\":[{\"index\":0,\"text\":\"\n\ndata: [DONE]\n\n"...))
	case NoDone:
		b := st.good(n, "4")
		s.send(w, bytes.TrimSuffix(b, []byte("data: [DONE]\n\n")))
	case NoEnd:
		s.send(w, append(st.chunk("Hello", ""), st.chunk(" world", "")...))
	case BigEvent:
		b := st.chunk(strings.Repeat("x", BigEventBytes), "length")
		s.send(w, append(append(b, st.usage(1, "1")...), "data: [DONE]\n\n"...))
	case TinyEvents:
		var b []byte
		for i := range TinyEventsN {
			fin := ""
			if i == TinyEventsN-1 {
				fin = "length"
			}
			b = append(b, st.chunk("a", fin)...)
		}
		s.send(w, append(append(b, st.usage(8, fmt.Sprint(TinyEventsN))...), "data: [DONE]\n\n"...))
	case JSONBody:
		writeJSON(w, http.StatusOK, map[string]any{"id": "cmpl-hostile", "object": "text_completion", "model": Model,
			"choices": []map[string]any{{"index": 0, "text": "Hello world", "finish_reason": "length"}},
			"usage":   map[string]any{"prompt_tokens": 8, "completion_tokens": 2, "total_tokens": 10}})
	case JSONError:
		writeJSON(w, http.StatusOK, map[string]any{"error": map[string]any{
			"message": "model is overloaded, try again later", "type": "server_error", "code": 503}})
	case EndlessHeaders:
		s.endlessHeaders(w)
	case CloseBeforeHeaders:
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			c.Close()
		}
	case Redirect:
		http.Redirect(w, r, s.Thief.URL+r.URL.Path, http.StatusTemporaryRedirect)
	case Echo401:
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
			"message": "invalid credentials: " + echo(r.Header), "type": "invalid_request_error", "code": 401}})
	default:
		http.NotFound(w, r)
	}
}

// send writes a 200 event stream of b, flushed in pieces so that it arrives as a stream.
func (s *Server) send(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	const piece = 32 << 10
	for len(b) > 0 {
		k := min(piece, len(b))
		if _, err := w.Write(b[:k]); err != nil {
			return
		}
		b = b[k:]
		_ = rc.Flush()
	}
	_ = rc.Flush()
}

// wait blocks until the client leaves, the server closes, or maxWait passes.
func (s *Server) wait(r *http.Request) {
	t := time.NewTimer(maxWait)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-s.quit:
	case <-t.C:
	}
}

// endlessHeaders writes a status line and then header lines until the client hangs up.
func (s *Server) endlessHeaders(w http.ResponseWriter) {
	c, bw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	_, _ = bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n")
	pad := strings.Repeat("x", 1000)
	for i, sent := 0, 0; sent < maxHeaderPad; i++ {
		select {
		case <-s.quit:
			return
		default:
		}
		_ = c.SetWriteDeadline(time.Now().Add(maxWait))
		k, err := fmt.Fprintf(bw, "X-Pad-%d: %s\r\n", i, pad)
		if err != nil || bw.Flush() != nil {
			return
		}
		sent += k
	}
}

// echo lists every credential-bearing header of h with its value, and the user name and
// password of a Basic Authorization decoded, as a careless server's error message would.
func echo(h http.Header) string {
	var parts []string
	for k, vs := range h {
		n := strings.ToLower(k)
		if strings.Contains(n, "auth") || strings.Contains(n, "key") || strings.Contains(n, "token") {
			for _, v := range vs {
				parts = append(parts, k+"="+v)
				if b64, ok := strings.CutPrefix(v, "Basic "); ok {
					if dec, err := base64.StdEncoding.DecodeString(b64); err == nil {
						parts = append(parts, "basic="+string(dec))
					}
				}
			}
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// stream builds the events of an OpenAI-style stream (completions or chat).
type stream struct{ chat bool }

// chunk is one content event with text, and finish reason fin when not "".
func (st *stream) chunk(text, fin string) []byte {
	f := "null"
	if fin != "" {
		f = `"` + fin + `"`
	}
	t, _ := json.Marshal(text)
	if st.chat {
		return fmt.Appendf(nil, `data: {"id":"chatcmpl-hostile","object":"chat.completion.chunk","created":1,"model":%q,"choices":[{"index":0,"delta":{"content":%s},"finish_reason":%s}]}`+"\n\n", Model, t, f)
	}
	return fmt.Appendf(nil, `data: {"id":"cmpl-hostile","object":"text_completion","created":1,"model":%q,"choices":[{"index":0,"text":%s,"logprobs":null,"finish_reason":%s}]}`+"\n\n", Model, t, f)
}

// usage is the usage-only event; completion is written as given (it may be no number).
func (st *stream) usage(prompt int, completion string) []byte {
	return fmt.Appendf(nil, `data: {"id":"cmpl-hostile","object":"text_completion","created":1,"model":%q,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%s,"total_tokens":%d}}`+"\n\n", Model, prompt, completion, prompt+4)
}

// good is a whole stream of n one-token chunks, the usage event and [DONE].
func (st *stream) good(n int, completion string) []byte {
	var b []byte
	for i := range n {
		fin := ""
		if i == n-1 {
			fin = "length"
		}
		b = append(b, st.chunk(fmt.Sprintf(" tok%d", i), fin)...)
	}
	b = append(b, st.usage(8, completion)...)
	return append(b, "data: [DONE]\n\n"...)
}
