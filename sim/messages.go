package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Anthropic Messages API (POST /v1/messages) as llama.cpp serves it: the request
// ({model, max_tokens, messages, system, stream}) is turned into the chat request it stands
// for (system first as a system message, each message's text content) and runs through
// the same validation, engine and timing as /v1/chat/completions, so one workload gives the
// same figures on both routes. The stream is Anthropic's event sequence:
//
//	message_start (usage.input_tokens), content_block_start, ping     at once, with the headers
//	content_block_delta (text_delta)                                  one per engine release
//	content_block_stop, message_delta (usage.output_tokens), message_stop
//
// Faults: disconnect cuts the stream, error_event sends Anthropic's error event and ends
// it, the HTTP faults answer with their status; the others are OpenAI or llama.cpp shapes
// and do nothing here. Errors are Anthropic's {"type":"error","error":{type, message}}.

// messagesRequest is the subset of a Messages API request the simulator honours.
type messagesRequest struct {
	Model     string            `json:"model"`
	MaxTokens *int              `json:"max_tokens"`
	Messages  []messagesMessage `json:"messages"`
	System    json.RawMessage   `json:"system"`
	Stream    bool              `json:"stream"`
	IgnoreEOS bool              `json:"ignore_eos"` // llama.cpp's and vLLM's extension
}

// messagesMessage content is a string or a list of blocks, of which text blocks count.
type messagesMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// chatRequest returns the chat request r stands for, or a 400's message.
func (r *messagesRequest) chatRequest() (genRequest, error) {
	g := genRequest{Model: r.Model, MaxTokens: r.MaxTokens, IgnoreEOS: r.IgnoreEOS, Stream: r.Stream}
	if r.MaxTokens == nil {
		return g, errors.New("max_tokens: Field required")
	}
	if len(r.System) > 0 && string(r.System) != "null" {
		sys, err := partsText(r.System, "content blocks", "text")
		if err != nil {
			return g, fmt.Errorf("system: %w", err)
		}
		g.Messages = append(g.Messages, textMessage("system", sys))
	}
	if len(r.Messages) == 0 {
		return g, errors.New("messages: at least one message is required")
	}
	for i, m := range r.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return g, fmt.Errorf("messages.%d.role: want user or assistant, got %q", i, m.Role)
		}
		text, err := partsText(m.Content, "content blocks", "text")
		if err != nil {
			return g, fmt.Errorf("messages.%d.content: %w", i, err)
		}
		g.Messages = append(g.Messages, textMessage(m.Role, text))
	}
	return g, nil
}

// writeAnthropicError writes Anthropic's error object with the type its status stands for.
func writeAnthropicError(w http.ResponseWriter, status int, msg string) {
	typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
		429: "rate_limit_error", 500: "api_error", 503: "overloaded_error"}[status]
	if typ == "" {
		typ = "api_error"
	}
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// handleMessages serves POST /v1/messages: handleGenerate's steps (arrival, request id,
// fault draw, validation, engine) with the Messages API's body and wire.
func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	id := s.messagesID(r)
	fault, err := s.arrive(w, r, id)
	if err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "X-Sim-Fault: "+err.Error())
		return
	}
	var mr messagesRequest
	if err := json.NewDecoder(r.Body).Decode(&mr); err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	g, err := mr.chatRequest()
	if err != nil {
		writeAnthropicError(w, http.StatusBadRequest, err.Error())
		return
	}
	p, status, err := s.checkGen(&genParams{req: g, chat: true})
	if err != nil {
		writeAnthropicError(w, status, err.Error())
		return
	}
	if st := faultStatus(fault.Kind); st != 0 {
		s.failFast(w, id, st)
		return
	}
	q, ok := s.admit(w, r, id, arrival, Fault{}, p)
	if !ok {
		return
	}
	defer s.finishSeq(q, outcome(p, fault))
	if fault.Kind == FaultSlowHeaders {
		sleepCtx(r.Context(), fault.Delay)
	}
	m := &msgStreamer{s: s, w: w, q: q, p: p, fault: fault, id: id}
	if mr.Stream {
		m.stream(r.Context())
		return
	}
	m.whole(r.Context())
}

// messagesID is the client's X-Request-Id (one line, trimmed) or a fresh id.
func (s *Server) messagesID(r *http.Request) string {
	if id := strings.TrimSpace(r.Header.Get("X-Request-Id")); id != "" && !strings.ContainsAny(id, "\r\n") {
		return id
	}
	return "msg_sim-" + strconv.FormatUint(s.nextID.Add(1), 10)
}

// msgStreamer writes one Messages API answer.
type msgStreamer struct {
	s       *Server
	w       http.ResponseWriter
	q       *seq
	p       *genParams
	fault   Fault
	id      string
	buf     []byte
	pending []TruthEvent
	events  int
	written int
}

// stopReason is Anthropic's name for the finish reason.
func (m *msgStreamer) stopReason() string {
	if finishReason(m.p) == "length" {
		return "max_tokens"
	}
	return "end_turn"
}

// event appends one SSE event of type typ whose payload is {"type":typ + rest}.
func (m *msgStreamer) event(typ, rest, kind string, tokens int) {
	m.buf = append(m.buf, "event: "+typ+"\ndata: {\"type\":\""+typ+"\""...)
	m.buf = append(m.buf, rest...)
	m.buf = append(m.buf, "}\n\n"...)
	m.pending = append(m.pending, TruthEvent{RequestID: m.id, Seq: m.events, Tokens: tokens, Kind: kind})
	m.events++
}

func (m *msgStreamer) flush(fl http.Flusher) {
	began := time.Now()
	if len(m.buf) > 0 {
		if _, err := m.w.Write(m.buf); err != nil {
			m.buf, m.pending = m.buf[:0], m.pending[:0]
			return
		}
	}
	fl.Flush()
	m.buf = m.buf[:0]
	if len(m.pending) > 0 {
		m.s.truth(m.pending, began, time.Now())
		m.pending = m.pending[:0]
	}
}

// head is message_start's message object, with the output tokens so far.
func (m *msgStreamer) head(out int) string {
	b := []byte(`{"id":`)
	b = appendJSONString(b, m.id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = appendJSONString(b, m.s.modelName)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(m.q.prompt), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(out), 10)
	return string(append(b, "}}"...))
}

// stream writes the event stream until the sequence finishes, the client leaves, or a
// fault ends it.
func (m *msgStreamer) stream(ctx context.Context) {
	fl, _ := m.w.(http.Flusher)
	if fl == nil {
		fl = noFlush{}
	}
	h := m.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	m.w.WriteHeader(http.StatusOK)
	m.event("message_start", `,"message":`+m.head(0), "lifecycle", 0)
	m.event("content_block_start", `,"index":0,"content_block":{"type":"text","text":""}`, "lifecycle", 0)
	m.event("ping", "", "lifecycle", 0)
	m.flush(fl)
	strikeAt := max(1, m.fault.Count)
	for {
		rel, fin, ok := m.s.waitTokens(ctx, m.q)
		if !ok {
			return
		}
		for m.written < rel {
			n := min(m.q.chunk, rel-m.written)
			b := []byte(`,"index":0,"delta":{"type":"text_delta","text":"`)
			b = appendWords(b, m.q.textSeed, m.written, m.written+n)
			m.event("content_block_delta", string(append(b, `"}`...)), "content", n)
			m.written += n
			if m.written >= strikeAt && !m.strike(fl) {
				return
			}
		}
		if fin {
			break
		}
		m.flush(fl)
	}
	m.event("content_block_stop", `,"index":0`, "lifecycle", 0)
	m.event("message_delta", `,"delta":{"stop_reason":"`+m.stopReason()+`","stop_sequence":null},"usage":{"output_tokens":`+
		strconv.Itoa(m.written)+`}`, "lifecycle", 0)
	m.event("message_stop", "", "done", 0)
	m.flush(fl)
}

// strike acts on the request's fault once its output reached the fault's point; false
// when the stream ends here.
func (m *msgStreamer) strike(fl http.Flusher) bool {
	switch m.fault.Kind {
	case FaultDisconnect:
		m.flush(fl)
		panic(http.ErrAbortHandler) // the connection closes without the chunked terminator
	case FaultErrorEvent:
		m.event("error", `,"error":{"type":"api_error","message":"simulated engine error (servebench sim fault error_event)"}`, "error", 0)
		m.flush(fl)
		return false
	}
	return true
}

// whole writes the non-streamed message once the sequence has finished.
func (m *msgStreamer) whole(ctx context.Context) {
	for {
		_, fin, ok := m.s.waitTokens(ctx, m.q)
		if !ok {
			return
		}
		if fin {
			break
		}
	}
	n := m.q.target
	b := []byte(`{"id":`)
	b = appendJSONString(b, m.id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = appendJSONString(b, m.s.modelName)
	b = append(b, `,"content":[{"type":"text","text":"`...)
	b = appendWords(b, m.q.textSeed, 0, n)
	b = append(b, `"}],"stop_reason":"`+m.stopReason()+`","stop_sequence":null,"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(m.q.prompt), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, "}}"...)
	m.w.Header().Set("Content-Type", "application/json")
	began := time.Now()
	m.w.WriteHeader(http.StatusOK)
	m.w.Write(b) //nolint:errcheck // nothing to do if the client left
	m.s.truth([]TruthEvent{{RequestID: m.id, Tokens: n, Kind: "response"}}, began, time.Now())
}
