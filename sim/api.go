package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// The non-hot-path endpoints: encoding/json is fine here.

// respondJSON serves a non-streaming request: it waits for the whole output, then answers
// with one JSON body.
func (s *Server) respondJSON(w http.ResponseWriter, r *http.Request, q *seq, p *genParams, fault Fault, id string) {
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
	var text strings.Builder
	for i := range q.target {
		if p.answer != nil { // answers.go
			text.WriteString(answerText(p.answer, q.target))
			break
		}
		text.WriteString(outputPieces[outputWord(q.textSeed, i)])
	}
	choice := map[string]any{"index": 0, "logprobs": nil, "finish_reason": finishReason(p)}
	object := "text_completion"
	if p.chat {
		object = "chat.completion"
		choice["message"] = map[string]any{"role": "assistant", "content": text.String()}
	} else {
		choice["text"] = text.String()
	}
	usage := map[string]any{"prompt_tokens": q.prompt, "completion_tokens": q.target, "total_tokens": q.prompt + q.target}
	s.reasonJSON(choice, usage, p, q)
	ev := TruthEvent{RequestID: id, Tokens: q.target, Kind: "response"}
	if c := q.cached.Load(); c >= 0 { // the prefix cache is on (see appendUsage)
		usage["prompt_tokens_details"] = map[string]int64{"cached_tokens": c}
		ev.CachedTokens, ev.hasCached = int(c), true
	}
	began := time.Now()
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": object, "created": s.created, "model": s.modelName,
		"choices": []any{choice}, "usage": usage,
	})
	s.truth([]TruthEvent{ev}, began, time.Now())
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": s.modelCards()})
}

func (s *Server) handleVersion(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"version": Version, "simulator": true,
		"note":   "servebench built-in simulator: timings come from a model, not from a GPU",
		"config": s.describe,
		"phases": s.Phases().versionPhases(), // changes as the engine warms up and drifts
	})
}

func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	var req tokenizeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	text, err := req.text()
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ids := s.tok.encode(text)
	if ids == nil {
		ids = []int{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": ids, "count": len(ids), "max_model_len": s.maxModelLen()})
}

func (s *Server) handleDetokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	text, err := s.tok.decode(req.Tokens)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"prompt": text})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // nothing to do if the client left
}

// writeError writes an OpenAI-style error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	typ := map[int]string{400: "BadRequestError", 404: "NotFoundError", 429: "RateLimitError",
		500: "InternalServerError", 503: "ServiceUnavailableError"}[status]
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status}})
}
