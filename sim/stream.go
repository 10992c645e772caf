package sim

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// streamer writes one request's SSE stream. Every event is appended to a reused buffer from
// preformatted pieces (no encoding/json on the hot path), then written and flushed; only
// after the flush are the events reported as ground truth, stamped with one time.Now.
type streamer struct {
	s        *Server
	w        http.ResponseWriter
	fl       http.Flusher
	q        *seq
	fault    Fault // Kind "" = no fault
	chat     bool
	head     []byte // `id: ID\ndata: {"id":"ID","object":"...","created":N,"model":"M",`
	buf      []byte
	pending  []TruthEvent
	events   int // events written so far (TruthEvent.Seq)
	written  int // tokens written so far
	textFrom int // first token whose text is not sent yet (hidden_tokens holds text back)
	strikeAt int // token count at which a mid-stream fault strikes
	struck   bool
	finish   string // finish_reason of the last content chunk
	usage    bool   // stream_options.include_usage
	contUse  bool   // stream_options.continuous_usage_stats
	toolID   string // the tool call's id with the tool_calls fault on chat or a planned call, "" otherwise
	reason   int    // output tokens that are reasoning (reasoning.go), 0 for none

	// tool is the call planned for a request that offered tools (tools.go)
	tool   *plannedCall
	answer []string // the answer's tokens, escaped, when the request has one (answers.go)
}

// begin sends the headers (and a role-only chunk when asked) right away, as vLLM does, so
// that the client sees the response start before the first token.
func (st *streamer) begin() {
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	if st.fault.Kind == FaultErrorLine {
		// llama.cpp's server (cpp-httplib, whose content provider reports the stream's end
		// as a cancel) closes the connection after the stream; here net/http does, after the
		// response, so no client reuses it.
		h.Set("Connection", "close")
	}
	st.w.WriteHeader(http.StatusOK)
	if st.fault.Kind == FaultRoleChunk && st.chat {
		st.buf = append(st.buf, st.head...)
		st.buf = append(st.buf, `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`+"\n\n"...)
		st.note(0, "role")
	}
	st.flush()
}

// run streams until the sequence finishes, the client leaves, or a fault ends the stream.
func (st *streamer) run(ctx context.Context) {
	st.begin()
	for {
		rel, fin, ok := st.s.waitTokens(ctx, st.q)
		if !ok {
			return
		}
		if fin && st.written == rel && st.written > 0 {
			// the engine released the last token before it marked the sequence finished:
			// the finish_reason goes in a chunk of its own, as vLLM sends it
			st.appendFinish()
		}
		for st.written < rel {
			n := min(st.q.chunk, rel-st.written)
			st.written += n
			last := fin && st.written == rel
			if last && st.fault.Kind == FaultAbort && !st.struck && st.written >= st.strikeAt {
				last = false // the abort chunk is the one with the finish_reason
			}
			st.appendContent(n, last)
			if !st.strike(ctx) {
				return
			}
			if st.fault.Kind == FaultKeepalive {
				st.buf = append(st.buf, ": keep-alive\n\n"...)
			}
		}
		if fin {
			break
		}
		st.flush()
	}
	if st.fault.Kind == FaultDisconnect { // fewer tokens than ARG: cut before the end marker
		st.flush()
		panic(http.ErrAbortHandler)
	}
	if st.usage || st.fault.Kind == FaultZeroUsage {
		st.appendUsageChunk()
	}
	if st.fault.Kind != FaultNoDone {
		st.appendDone()
	}
	st.flush()
}

// strike applies a mid-stream fault once its token count is reached. It returns false when
// the stream has ended.
func (st *streamer) strike(ctx context.Context) bool {
	if st.struck || st.fault.Kind == "" || st.written < st.strikeAt {
		return true
	}
	switch st.fault.Kind {
	case FaultDisconnect:
		st.flush()
		// net/http closes the connection without the final chunk: the client sees a cut
		// stream, no [DONE], exactly like a crashed server or a dropped proxy connection.
		panic(http.ErrAbortHandler)
	case FaultErrorEvent:
		st.buf = append(st.buf, st.head[:st.idLineLen()]...)
		st.buf = append(st.buf, `data: {"error":{"message":"simulated engine error (servebench sim fault error_event)","type":"InternalServerError","param":null,"code":500}}`+"\n\n"...)
		st.note(0, "error")
		st.appendDone() // vLLM ends an errored stream with [DONE] after the error event
		st.flush()
		return false
	case FaultAbort:
		st.appendAbort()
		if st.usage {
			st.appendUsageChunk() // vLLM still sends the final usage of an aborted request
		}
		st.appendDone()
		st.flush()
		return false
	case FaultErrorLine:
		// llama.cpp's server_sent_event(sink, "error", …): the field is "error", not "data",
		// and the JSON is its format_error_response (keys in nlohmann::json's sorted order).
		// Its OpenAI-compatible routes then still write [DONE] before the body ends.
		st.buf = append(st.buf, `error: {"code":500,"message":"simulated server error (servebench sim fault error_line)","type":"server_error"}`+"\n\n"...)
		st.note(0, "error")
		st.appendDone()
		st.flush()
		return false
	case FaultStall:
		st.flush()
		sleepCtx(ctx, st.fault.Delay)
	case FaultMalformedJSON:
		st.buf = append(st.buf, st.head[:st.idLineLen()]...)
		st.buf = append(st.buf, `data: {"id":"broken","choices":[{"index":0,"text":"`+"\n\n"...)
		st.note(0, "malformed")
	}
	st.struck = true
	return true
}

// idLineLen is the length of the "id: ...\n" line at the start of head.
func (st *streamer) idLineLen() int {
	for i, c := range st.head {
		if c == '\n' {
			return i + 1
		}
	}
	return 0
}

// appendContent appends the chunk of the n tokens just generated. It is a content chunk
// carrying them and every token whose text was held back before them, except with the
// hidden_tokens fault on every ARG-th token (never the last): then the chunk's text is
// empty, as vLLM sends a token whose text its detokenizer holds back (the first bytes of a
// multi-byte character) or does not show (a special token); its count still advances the
// continuous usage, and its text and tokens go with the next content chunk.
func (st *streamer) appendContent(n int, last bool) {
	if st.fault.Kind == FaultHiddenTokens && !last && st.written%st.fault.Count < n {
		st.appendEmpty()
		return
	}
	b := append(st.buf, st.head...)
	switch {
	case st.toolID != "":
		b = st.appendToolCall(b)
	case st.reason > 0:
		b = st.appendReasoningDelta(b)
	case st.chat:
		b = append(b, `"choices":[{"index":0,"delta":{"content":"`...)
	default:
		b = append(b, `"choices":[{"index":0,"text":"`...)
	}
	if st.toolID == "" && st.reason == 0 {
		b = st.appendText(b) // answers.go
		if st.chat {
			b = append(b, '"', '}')
		} else {
			b = append(b, '"')
		}
	}
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	switch {
	case last && st.toolID != "": // vLLM's finish chunk of a tool call, with its stop_reason
		b = append(b, `"tool_calls","stop_reason":null`...)
	case last:
		b = append(b, '"')
		b = append(b, st.finish...)
		b = append(b, '"')
	default:
		b = append(b, "null"...)
	}
	b = append(b, `}]`...)
	b = st.appendChunkUsage(b)
	st.buf = append(b, "}\n\n"...)
	first := st.textFrom == 0
	st.note(st.written-st.textFrom, st.contentKind())
	st.textFrom = st.written
	if first { // the first tokens: the prefill that produced them knew its cache hit
		st.noteCached()
	}
}

// appendChunkUsage appends the usage a content (or text-free) chunk carries, if any.
func (st *streamer) appendChunkUsage(b []byte) []byte {
	switch {
	case st.fault.Kind == FaultZeroUsage:
		return appendUsage(b, 0, 0, -1)
	case st.contUse: // vLLM leaves the prompt details out of continuous usage
		return appendUsage(b, st.q.prompt, st.written, -1)
	}
	return b
}

// appendFinish appends a chunk that carries only the finish_reason (an empty delta), for a
// sequence whose last token went out before the engine marked it finished. Like an empty
// chunk it is no content event: the truth log has it as kind "empty" with no tokens.
func (st *streamer) appendFinish() {
	reason := `"` + st.finish + `"`
	if st.toolID != "" {
		reason = `"tool_calls","stop_reason":null`
	}
	b := append(st.buf, st.head...)
	if st.chat {
		b = append(b, `"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":`+reason+`}]`...)
	} else {
		b = append(b, `"choices":[{"index":0,"text":"","logprobs":null,"finish_reason":`+reason+`}]`...)
	}
	b = st.appendChunkUsage(b)
	st.buf = append(b, "}\n\n"...)
	st.note(0, "empty")
}

// appendEmpty appends a chunk whose text is empty (hidden_tokens). It is not a content event:
// the truth log has it as kind "empty" with no tokens, and the next content event carries
// its tokens, as servebench attributes them (docs/servers.md, "Token attribution").
func (st *streamer) appendEmpty() {
	b := append(st.buf, st.head...)
	if st.chat {
		b = append(b, `"choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":null}]`...)
	} else {
		b = append(b, `"choices":[{"index":0,"text":"","logprobs":null,"finish_reason":null}]`...)
	}
	b = st.appendChunkUsage(b)
	st.buf = append(b, "}\n\n"...)
	st.note(0, "empty")
}

// appendToolCall appends the choices of a tool-call chunk up to its delta's end, in the
// shapes of vLLM's tool parsers (DeltaToolCall, pydantic's field order): the first chunk
// opens the call with its id, type and function name, the later ones each add a piece of
// the arguments string, which is whole JSON once the call is (`{"query": "<the text>"}`).
// Token 0 is the name; each later token adds its word.
func (st *streamer) appendToolCall(b []byte) []byte {
	if st.tool != nil {
		return st.appendPlannedCall(b)
	}
	b = append(b, `"choices":[{"index":0,"delta":{"tool_calls":[{`...)
	if st.textFrom == 0 {
		b = append(b, `"id":"`...)
		b = append(b, st.toolID...)
		b = append(b, `","type":"function","index":0,"function":{"name":"search"`...)
	} else {
		b = append(b, `"index":0,"function":{`...)
	}
	args := len(b)
	if st.textFrom > 0 {
		b = append(b, `"arguments":"`...)
	} else {
		b = append(b, `,"arguments":"`...)
	}
	bare := len(b)
	for i := st.textFrom; i < st.written; i++ {
		switch i {
		case 0:
			continue
		case 1:
			b = append(b, `{\"query\": \"`...)
		}
		b = append(b, outputPieces[outputWord(st.q.textSeed, i)]...)
	}
	switch {
	case st.written < st.q.target:
	case st.q.target == 1:
		b = append(b, "{}"...)
	default:
		b = append(b, `\"}`...)
	}
	if len(b) == bare { // the first chunk of a longer call: the name alone
		b = b[:args]
	} else {
		b = append(b, '"')
	}
	return append(b, `}}]}`...)
}

// appendAbort appends the chunk with which vLLM (and SGLang's OpenAI routes) end a request
// the engine aborted: no new text, finish_reason "abort" (vLLM's FinishReason.ABORT).
func (st *streamer) appendAbort() {
	b := append(st.buf, st.head...)
	if st.chat {
		b = append(b, `"choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"abort","stop_reason":null}]`...)
	} else {
		b = append(b, `"choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"abort","stop_reason":null}]`...)
	}
	b = st.appendChunkUsage(b)
	st.buf = append(b, "}\n\n"...)
	st.note(0, "abort")
}

// noteCached puts the request's prefix-cache hit on the event just noted, when the prefix
// cache is on.
func (st *streamer) noteCached() {
	if c := st.q.cached.Load(); c >= 0 {
		ev := &st.pending[len(st.pending)-1]
		ev.CachedTokens, ev.hasCached = int(c), true
	}
}

// appendUsageChunk appends the final `choices: []` chunk with the real usage.
func (st *streamer) appendUsageChunk() {
	b := append(st.buf, st.head...)
	b = append(b, `"choices":[]`...)
	b = appendUsage(b, st.q.prompt, st.written, int(st.q.cached.Load()))
	b = st.appendReasoningUsage(b)
	st.buf = append(b, "}\n\n"...)
	st.note(0, "usage")
}

func (st *streamer) appendDone() {
	st.buf = append(st.buf, "data: [DONE]\n\n"...)
	st.note(0, "done")
}

// appendUsage appends the usage object, with prompt_tokens_details.cached_tokens unless
// cached is negative (the prefix cache is off). vLLM writes the details only when started
// with --enable-prompt-tokens-details and the count is not 0; the simulator always reports
// them while its cache is on, so that a 0 is known to be a miss, not unreported.
func appendUsage(b []byte, prompt, completion, cached int) []byte {
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+completion), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	if cached >= 0 {
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(cached), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// note queues the ground-truth record of an event appended to the buffer.
func (st *streamer) note(tokens int, kind string) {
	st.pending = append(st.pending, TruthEvent{RequestID: st.q.id, Seq: st.events, Tokens: tokens, Kind: kind})
	st.events++
}

// flush writes the buffer, flushes it to the connection, then reports its events as truth.
func (st *streamer) flush() {
	began := time.Now()
	if len(st.buf) > 0 {
		if _, err := st.w.Write(st.buf); err != nil {
			st.buf, st.pending = st.buf[:0], st.pending[:0]
			return // the client is gone; its context ends the stream
		}
	}
	st.fl.Flush()
	st.buf = st.buf[:0]
	if len(st.pending) > 0 {
		st.s.truth(st.pending, began, time.Now())
		st.pending = st.pending[:0]
	}
}

// newHead preformats the part shared by every chunk of a stream.
func newHead(id, object, model string, created int64) []byte {
	b := append([]byte("id: "), id...)
	b = append(b, "\ndata: {\"id\":"...)
	b = appendJSONString(b, id)
	b = append(b, `,"object":"`+object+`","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, model)
	return append(b, ',')
}

// appendJSONString appends s as a JSON string literal.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
