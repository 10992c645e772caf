package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The OpenAI Responses API (POST /v1/responses) as vLLM serves it: the request is turned
// into the chat request it stands for (input messages, or a string as one user message;
// instructions as a system message first; max_output_tokens as the output cap; vLLM's
// ignore_eos) and runs through the same validation, engine and timing as
// /v1/chat/completions, so one workload gives the same figures on both routes. Only the
// wire differs (responses_stream.go).

// responsesRequest is the subset of a Responses API request the simulator honours.
type responsesRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    string          `json:"instructions"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
	IgnoreEOS       bool            `json:"ignore_eos"` // vLLM's extension; the Responses API has no min_tokens
	Stream          bool            `json:"stream"`
}

// inputItem is one item of a list input: a message ({"role", "content"}, with or without
// "type": "message"). Other item types (function call outputs, reasoning) are refused.
type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// chatRequest returns the chat request r stands for, or a 400's message.
func (r *responsesRequest) chatRequest() (genRequest, error) {
	g := genRequest{Model: r.Model, MaxCompletionTokens: r.MaxOutputTokens, IgnoreEOS: r.IgnoreEOS, Stream: r.Stream}
	if r.Instructions != "" {
		g.Messages = append(g.Messages, textMessage("system", r.Instructions))
	}
	msgs, err := inputMessages(r.Input)
	if err != nil {
		return g, err
	}
	g.Messages = append(g.Messages, msgs...)
	return g, nil
}

// inputMessages reads "input": a string (one user message) or a list of message items
// whose content is a string or a list of text parts.
func inputMessages(raw json.RawMessage) ([]chatMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("input is required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []chatMessage{textMessage("user", s)}, nil
	}
	var items []inputItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errors.New("input must be a string or a list of input items")
	}
	if len(items) == 0 {
		return nil, errors.New("input must not be empty")
	}
	msgs := make([]chatMessage, 0, len(items))
	for i, it := range items {
		if it.Type != "" && it.Type != "message" {
			return nil, fmt.Errorf("input[%d]: the simulator accepts message items only, not %q", i, it.Type)
		}
		text, err := partsText(it.Content, "content parts", "input_text", "output_text", "text")
		if err != nil {
			return nil, fmt.Errorf("input[%d].content: %w", i, err)
		}
		msgs = append(msgs, textMessage(it.Role, text))
	}
	return msgs, nil
}

// partsText is a message's text: a string, or the texts of its parts whose type is one of
// kinds, joined by spaces (the chat route's rule, so token counts agree); noun names the parts
// in the error ("content parts", "content blocks").
func partsText(raw json.RawMessage, noun string, kinds ...string) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("must be a string or a list of " + noun)
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if slices.Contains(kinds, p.Type) {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, " "), nil
}

// textMessage is a chat message with string content.
func textMessage(role, text string) chatMessage {
	return chatMessage{Role: role, Content: text}
}

// parseResponses reads and validates a Responses API request; the error is the 4xx to return.
func (s *Server) parseResponses(r *http.Request) (*genParams, int, error) {
	var rr responsesRequest
	if err := json.NewDecoder(r.Body).Decode(&rr); err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("invalid JSON body: %v", err)
	}
	if n := rr.MaxOutputTokens; n != nil && *n < 1 {
		return nil, http.StatusBadRequest, fmt.Errorf("max_output_tokens must be at least 1, got %d", *n)
	}
	g, err := rr.chatRequest()
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	return s.checkGen(&genParams{req: g, chat: true})
}

// handleResponses serves POST /v1/responses: handleGenerate's steps (arrival, request id,
// fault draw, validation, engine) with the Responses API's body and wire.
func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now() // before parsing: the request's delays start when it arrives
	id := s.responseID(r)
	fault, err := s.arrive(w, r, id)
	if err != nil {
		writeError(w, http.StatusBadRequest, "X-Sim-Fault: "+err.Error())
		return
	}
	p, status, err := s.parseResponses(r)
	if err != nil {
		writeError(w, status, err.Error())
		return
	}
	q, ok := s.admit(w, r, id, arrival, fault, p)
	if !ok {
		return
	}
	defer s.finishSeq(q, outcome(p, fault))
	if fault.Kind == FaultSlowHeaders {
		sleepCtx(r.Context(), fault.Delay)
	}
	if p.req.Stream {
		s.newRespStreamer(w, q, p, fault, id).run(r.Context())
		return
	}
	s.respondResponse(w, r, q, fault, id, s.reasoningFor(p))
}

// responseID is the client's X-Request-Id (one line, trimmed) or a fresh id.
func (s *Server) responseID(r *http.Request) string {
	if id := strings.TrimSpace(r.Header.Get("X-Request-Id")); id != "" && !strings.ContainsAny(id, "\r\n") {
		return id
	}
	return "resp_sim-" + strconv.FormatUint(s.nextID.Add(1), 10)
}

// respondResponse writes the whole response object once the sequence has finished.
func (s *Server) respondResponse(w http.ResponseWriter, r *http.Request, q *seq, fault Fault, id string, reason int) {
	for {
		_, fin, ok := s.waitTokens(r.Context(), q)
		if !ok {
			return
		}
		if fin {
			break
		}
	}
	if fault.Kind == FaultDisconnect {
		panic(http.ErrAbortHandler)
	}
	b := appendResponseObject(nil, s, q, id, "completed", q.target, reason)
	w.Header().Set("Content-Type", "application/json")
	began := time.Now()
	w.WriteHeader(http.StatusOK)
	w.Write(b) //nolint:errcheck // nothing to do if the client left
	ev := TruthEvent{RequestID: id, Tokens: q.target, Kind: "response"}
	if c := q.cached.Load(); c >= 0 {
		ev.CachedTokens, ev.hasCached = int(c), true
	}
	s.truth([]TruthEvent{ev}, began, time.Now())
}

// appendResponseObject appends the response object of q with status (in_progress,
// completed, or failed with the abort fault's error) and, when completed, its first n tokens
// of output text and its usage. vLLM always reports
// input_tokens_details.cached_tokens on this route (0 without a prefix cache), so the
// simulator does too.
//
// reason is how many of the n tokens are reasoning (--reasoning-tokens): the message's text
// is the rest, and usage.output_tokens_details.reasoning_tokens counts them.
func appendResponseObject(b []byte, s *Server, q *seq, id, status string, n, reason int) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, s.created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, s.modelName)
	b = append(b, `,"status":"`+status+`","error":`...)
	if status == "failed" {
		b = append(b, `{"code":"server_error","message":"simulated abort: the engine aborted the request (servebench sim fault abort)"}`...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"incomplete_details":null,"max_output_tokens":`...)
	b = strconv.AppendInt(b, int64(q.times.maxTokens), 10)
	if status != "completed" {
		return append(b, `,"output":[],"usage":null}`...)
	}
	b = append(b, `,"output":[{"id":`...)
	b = appendJSONString(b, itemID(q.id))
	b = append(b, `,"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","annotations":[],"text":"`...)
	reason = min(reason, n)
	b = appendWords(b, q.textSeed, reason, n)
	b = append(b, `"}]}],"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(q.prompt), 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, max(q.cached.Load(), 0), 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(reason), 10)
	b = append(b, `},"total_tokens":`...)
	b = strconv.AppendInt(b, int64(q.prompt+n), 10)
	return append(b, `}}`...)
}

// itemID is the id of a response's output message.
func itemID(id string) string { return "msg_" + id }

// reasoningItemID is the id of a response's reasoning item (vLLM's rs_ prefix).
func reasoningItemID(id string) string { return "rs_" + id }
