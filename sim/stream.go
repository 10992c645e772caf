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
	strikeAt int // token count at which a mid-stream fault strikes
	struck   bool
	finish   string // finish_reason of the last content chunk
	usage    bool   // stream_options.include_usage
	contUse  bool   // stream_options.continuous_usage_stats
}

// begin sends the headers (and a role-only chunk when asked) right away, as vLLM does, so
// that the client sees the response start before the first token.
func (st *streamer) begin() {
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
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
		for st.written < rel {
			n := min(st.q.chunk, rel-st.written)
			st.written += n
			st.appendContent(n, fin && st.written == rel)
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

// appendContent appends one content chunk carrying n tokens.
func (st *streamer) appendContent(n int, last bool) {
	b := append(st.buf, st.head...)
	if st.chat {
		b = append(b, `"choices":[{"index":0,"delta":{"content":"`...)
	} else {
		b = append(b, `"choices":[{"index":0,"text":"`...)
	}
	for i := st.written - n; i < st.written; i++ {
		b = append(b, outputPieces[outputWord(st.q.textSeed, i)]...)
	}
	if st.chat {
		b = append(b, '"', '}')
	} else {
		b = append(b, '"')
	}
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	if last {
		b = append(b, '"')
		b = append(b, st.finish...)
		b = append(b, '"')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `}]`...)
	switch {
	case st.fault.Kind == FaultZeroUsage:
		b = appendUsage(b, 0, 0, -1)
	case st.contUse: // vLLM leaves the prompt details out of continuous usage
		b = appendUsage(b, st.q.prompt, st.written, -1)
	}
	st.buf = append(b, "}\n\n"...)
	st.note(n, "content")
	if st.written == n { // the first tokens: the prefill that produced them knew its cache hit
		st.noteCached()
	}
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
	if len(st.buf) > 0 {
		if _, err := st.w.Write(st.buf); err != nil {
			st.buf, st.pending = st.buf[:0], st.pending[:0]
			return // the client is gone; its context ends the stream
		}
	}
	st.fl.Flush()
	st.buf = st.buf[:0]
	if len(st.pending) > 0 {
		st.s.truth(st.pending, time.Now())
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
