package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// routes builds the HTTP API.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/completions", s.handleGenerate(false))
	mux.HandleFunc("POST /v1/chat/completions", s.handleGenerate(true))
	mux.HandleFunc("POST /v1/responses", s.handleResponses)
	mux.HandleFunc("POST /v1/messages", s.handleMessages)     // messages.go
	mux.HandleFunc("POST /v1/embeddings", s.handleEmbeddings) // pooling.go
	mux.HandleFunc("POST /v1/rerank", s.handleRerank)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /version", s.handleVersion)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(s.writeMetrics()) //nolint:errcheck // nothing to do if the scraper left
	})
	mux.HandleFunc("GET /dcgm/metrics", s.handleDCGM)
	mux.HandleFunc("POST /tokenize", s.handleTokenize)
	mux.HandleFunc("POST /detokenize", s.handleDetokenize)
	if s.cfg.DevMode {
		mux.HandleFunc("POST /reset_prefix_cache", s.handleResetPrefixCache)
	}
	return mux
}

// genParams is a validated generation request.
type genParams struct {
	req      genRequest
	chat     bool
	prompt   int
	maxTok   int
	target   int
	textSeed uint64
	lora     int         // the adapter named by the model field, from 1 (0 = the base model)
	hasher   blockHasher // the prompt's block hashes when the prefix cache is on
	// tools offered and the tool_choice ("auto", "required", "none" or "=NAME"; tools.go)
	tools      []simTool
	toolChoice string
	// answers.go: the prompt's answer-key entry, the response format, the planned answer
	key    *keyEntry
	format *responseFormat
	answer []string
}

// parseGen reads and validates a generation request; the error is the 4xx to return.
func (s *Server) parseGen(r *http.Request, chat bool) (*genParams, int, error) {
	p := &genParams{chat: chat}
	if err := json.NewDecoder(r.Body).Decode(&p.req); err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("invalid JSON body: %v", err)
	}
	return s.checkGen(p)
}

// checkGen validates a decoded generation request and fills the rest of p.
func (s *Server) checkGen(p *genParams) (*genParams, int, error) {
	chat := p.chat
	var ok bool
	if p.lora, ok = s.resolveModel(p.req.Model); !ok {
		return nil, http.StatusNotFound, fmt.Errorf("the model `%s` does not exist", p.req.Model)
	}
	text, idCount, err := p.req.promptText(chat)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	if p.tools, p.toolChoice, err = p.req.parseTools(); err != nil {
		return nil, http.StatusBadRequest, err
	}
	p.prompt = idCount
	switch {
	case s.model != nil && !s.cfg.NoPrefixCache: // hashed here, so the engine goroutine only looks up
		p.hasher = promptBlockHashes(text, p.req.Prompt, idCount, s.model.blockSize)
		p.hasher.salt(p.lora)      // lora.go: an adapter's KV is its own
		p.prompt = p.hasher.tokens // hashing the blocks counted the tokens
	case idCount == 0:
		p.prompt = countTokens(text)
	}
	p.prompt += s.costMedia(p) // images and audio (media.go)
	p.maxTok = p.req.maxTokens(chat)
	if p.maxTok < 1 {
		return nil, http.StatusBadRequest, fmt.Errorf("max_tokens must be at least 1, got %d", p.maxTok)
	}
	if p.prompt+p.maxTok > s.maxModelLen() {
		return nil, http.StatusBadRequest, fmt.Errorf("this model's maximum context length is %d tokens; however, you requested %d tokens (%d in the messages, %d in the completion)",
			s.maxModelLen(), p.prompt+p.maxTok, p.prompt, p.maxTok)
	}
	if s.model != nil && p.prompt+p.maxTok > s.model.kvCapacity {
		return nil, http.StatusBadRequest, fmt.Errorf("request needs %d tokens of KV cache but the simulated cache holds %d (--kv-cache-tokens)", p.prompt+p.maxTok, s.model.kvCapacity)
	}
	if p.key, p.format, err = s.answerFor(text, p.req.ResponseFormat); err != nil { // answers.go
		return nil, http.StatusBadRequest, err
	}
	h := hashPrompt(text, idCount, s.cfg.Seed)
	p.target = outputLength(p.maxTok, p.req.MinTokens, p.req.IgnoreEOS, h)
	p.textSeed = h
	// the prompt has been counted, hashed and its blocks hashed: drop it, so that a stream
	// does not hold its 128k-token prompt (twice: raw and decoded) for as long as it runs
	p.req.Prompt, p.req.Messages = nil, nil
	return p, 0, nil
}

// arrive answers with the request's id in X-Request-Id, logs when the request was read (the
// truth log), and returns the request's fault (requestFault).
func (s *Server) arrive(w http.ResponseWriter, r *http.Request, id string) (Fault, error) {
	w.Header().Set("X-Request-Id", id)
	if read, arrived := requestRead(r); read != 0 && s.truthLog != nil {
		s.truthLog.writeRequest(id, read, arrived)
	}
	return s.requestFault(r)
}

// requestFault picks the request's fault: the X-Sim-Fault header wins over the seeded draw
// (the draw still happens, so header use does not shift later requests' draws).
func (s *Server) requestFault(r *http.Request) (Fault, error) {
	f, _ := s.faults.draw()
	if h := r.Header.Get("X-Sim-Fault"); h != "" {
		return ParseFault(h)
	}
	return f, nil
}

// requestID is the client's X-Request-Id (one line, trimmed) or a fresh id.
func (s *Server) requestID(r *http.Request, chat bool) string {
	if id := strings.TrimSpace(r.Header.Get("X-Request-Id")); id != "" && !strings.ContainsAny(id, "\r\n") {
		return id
	}
	prefix := "cmpl-sim-"
	if chat {
		prefix = "chatcmpl-sim-"
	}
	return prefix + strconv.FormatUint(s.nextID.Add(1), 10)
}

// handleGenerate serves /v1/completions and /v1/chat/completions.
func (s *Server) handleGenerate(chat bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		arrival := time.Now() // before parsing: the request's delays start when it arrives
		id := s.requestID(r, chat)
		fault, err := s.arrive(w, r, id)
		if err != nil {
			writeError(w, http.StatusBadRequest, "X-Sim-Fault: "+err.Error())
			return
		}
		p, status, err := s.parseGen(r, chat)
		if err != nil {
			writeError(w, status, err.Error())
			return
		}
		s.planAnswer(p, id) // answers.go
		q, ok := s.admit(w, r, id, arrival, fault, p)
		if !ok {
			return
		}
		defer s.finishSeq(q, outcome(p, fault))
		if fault.Kind == FaultSlowHeaders {
			sleepCtx(r.Context(), fault.Delay)
		}
		if p.req.Stream {
			s.newStreamer(w, q, p, fault, id).run(r.Context())
			return
		}
		s.respondJSON(w, r, q, p, fault, id)
	}
}

// admit answers an HTTP fault, or makes the request's sequence (its adapter, its chunking
// under a multi-token fault or speculative decoding) and adds it to the engine; false when
// the request was answered here. Every generation route (completions, chat, Responses)
// admits through it, so each gets the same engine behaviour.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, id string, arrival time.Time, fault Fault, p *genParams) (*seq, bool) {
	if st := faultStatus(fault.Kind); st != 0 {
		s.failFast(w, id, st)
		return nil, false
	}
	q := newSeq(id, p.prompt, p.target, 1, p.textSeed, arrival)
	q.hasher = p.hasher
	q.times.maxTokens = p.maxTok
	if fault.Kind == FaultMultiToken {
		q.chunk = fault.Count
	}
	q.lora = p.lora
	if s.eng.spans != nil { // otlp.go
		if tc, ok := parseTraceParent(r.Header.Get("traceparent")); ok {
			q.trace = &tc
		}
	}
	if s.eng.spec != nil { // one event per step: the step's accepted drafts and its sampled token
		q.chunk = 1 + s.eng.spec.k
	}
	if err := s.eng.add(q, r.Context().Done()); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return nil, false
	}
	return q, true
}

// faultStatus maps an HTTP fault to its status, 0 for other kinds.
func faultStatus(kind string) int {
	switch kind {
	case FaultHTTP429:
		return http.StatusTooManyRequests
	case FaultHTTP500:
		return http.StatusInternalServerError
	case FaultHTTP503:
		return http.StatusServiceUnavailable
	}
	return 0
}

func (s *Server) failFast(w http.ResponseWriter, id string, status int) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	began := time.Now()
	writeError(w, status, fmt.Sprintf("simulated HTTP %d (servebench sim fault)", status))
	if status >= 500 {
		s.stats.finishedError.Add(1)
	}
	s.truth([]TruthEvent{{RequestID: id, Kind: "http_error"}}, began, time.Now())
}

// finishSeq marks a sequence the client abandoned as cancelled (the engine frees it) and
// counts the request's outcome.
func (s *Server) finishSeq(q *seq, reason string) {
	switch {
	case reason == "error": // the server failed it: the engine frees it as a cancelled one
		if !q.finished.Load() {
			q.cancelled.Store(true)
		}
		s.stats.finishedError.Add(1)
	case !q.finished.Load():
		q.cancelled.Store(true)
		s.stats.finishedAbort.Add(1)
	case reason == "stop":
		s.stats.finishedStop.Add(1)
	default:
		s.stats.finishedLength.Add(1)
	}
}

func (s *Server) newStreamer(w http.ResponseWriter, q *seq, p *genParams, fault Fault, id string) *streamer {
	object := "text_completion"
	if p.chat {
		object = "chat.completion.chunk"
	}
	st := &streamer{s: s, w: w, q: q, fault: fault, chat: p.chat, finish: finishReason(p),
		head: newHead(id, object, s.modelName, s.created), buf: make([]byte, 0, 1024)}
	st.fl, _ = w.(http.Flusher)
	if st.fl == nil {
		st.fl = noFlush{}
	}
	if o := p.req.StreamOptions; o != nil {
		st.usage, st.contUse = o.IncludeUsage, o.ContinuousUsageStats
	}
	st.strikeAt = fault.Count
	st.reason = s.reasoningFor(p)
	st.answer = p.answer
	if st.strikeAt == 0 || fault.Kind == FaultMultiToken || fault.Kind == FaultHiddenTokens {
		st.strikeAt = max(1, p.target/2)
	}
	if fault.Kind == FaultToolCalls && p.chat {
		st.toolID = toolCallID(p.textSeed)
	}
	if st.tool = s.planToolCall(p); st.tool != nil && p.chat { // tools.go
		st.toolID = toolCallID(p.textSeed)
	}
	return st
}

// toolCallID is a tool call's id as vLLM makes it ("chatcmpl-tool-" and 32 hex digits of a
// random UUID), here drawn from the request's text seed so that a replay sends the same.
func toolCallID(seed uint64) string {
	const hex = "0123456789abcdef"
	b := []byte("chatcmpl-tool-")
	for _, x := range [2]uint64{mix64(seed ^ 0x746f6f6c), mix64(seed ^ 0x63616c6c)} {
		for i := 60; i >= 0; i -= 4 {
			b = append(b, hex[x>>uint(i)&0xf])
		}
	}
	return string(b)
}

type noFlush struct{}

func (noFlush) Flush() {}

// outcome is the finished_reason vLLM's request_success_total counts q under: "error" for
// a request the server fails mid-stream, else its finish reason.
func outcome(p *genParams, f Fault) string {
	if f.Kind == FaultErrorEvent {
		return "error"
	}
	return finishReason(p)
}

func finishReason(p *genParams) string {
	if p.target >= p.maxTok {
		return "length"
	}
	return "stop"
}

// waitTokens blocks until the engine has released more tokens of q (or finished it). ok is
// false when the client left or the engine stopped.
func (s *Server) waitTokens(ctx context.Context, q *seq) (released int, finished, ok bool) {
	select {
	case <-q.notify:
	case <-ctx.Done():
		return 0, false, false
	case <-s.eng.done:
		return 0, false, false
	}
	// Read finished first: the engine stores released before finished, so a true finished
	// guarantees released is final.
	fin := q.finished.Load()
	return int(q.released.Load()), fin, true
}

// handleResetPrefixCache empties the prefix cache of every free block, as vLLM's development
// endpoint does: the engine loop does it between steps (it owns the cache), and the answer
// waits for it.
func (s *Server) handleResetPrefixCache(w http.ResponseWriter, r *http.Request) {
	q := &seq{reset: make(chan struct{})}
	if err := s.eng.add(q, r.Context().Done()); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	select {
	case <-q.reset:
		w.WriteHeader(http.StatusOK)
	case <-r.Context().Done():
	case <-s.eng.done:
		http.Error(w, "server stopping", http.StatusServiceUnavailable)
	}
}
