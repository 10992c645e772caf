package sim

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// respStreamer writes one request's Responses API stream in vLLM's event sequence:
//
//	response.created, response.in_progress        at once, with the headers
//	response.output_item.added, content_part.added with the first delta
//	response.output_text.delta                     one per engine release, as chat sends chunks
//	response.output_text.done, content_part.done,
//	response.output_item.done, response.completed with the last delta; completed has the usage
//
// Each event is `event: TYPE` then `data: {"type":"TYPE","sequence_number":N,...}`; there is
// no [DONE]. Events are flushed at the same moments as the chat streamer's chunks, so the
// two routes give one workload the same timings. In the truth log the deltas are kind
// content, response.completed is done, and every other event is lifecycle.
//
// Faults: disconnect, stall, keepalive, multi_token and slow_headers act as on chat;
// error_event sends OpenAI's "error" event and ends the stream; abort ends it with
// response.failed; malformed_json sends a cut delta; no_done omits response.completed. The
// others (role_chunk, zero_usage, hidden_tokens, tool_calls, error_line) are chat or
// llama.cpp shapes and do nothing here.
type respStreamer struct {
	s        *Server
	w        http.ResponseWriter
	fl       http.Flusher
	q        *seq
	fault    Fault
	id       string
	buf      []byte
	pending  []TruthEvent
	events   int // events written so far (TruthEvent.Seq)
	seqNo    int // the next sequence_number
	written  int // tokens written so far
	strikeAt int
	struck   bool
}

func (s *Server) newRespStreamer(w http.ResponseWriter, q *seq, p *genParams, fault Fault, id string) *respStreamer {
	st := &respStreamer{s: s, w: w, q: q, fault: fault, id: id, buf: make([]byte, 0, 1024)}
	st.fl, _ = w.(http.Flusher)
	if st.fl == nil {
		st.fl = noFlush{}
	}
	st.strikeAt = fault.Count
	if st.strikeAt == 0 || fault.Kind == FaultMultiToken {
		st.strikeAt = max(1, p.target/2)
	}
	return st
}

// run streams until the sequence finishes, the client leaves, or a fault ends the stream.
func (st *respStreamer) run(ctx context.Context) {
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	st.w.WriteHeader(http.StatusOK)
	for _, typ := range []string{"response.created", "response.in_progress"} {
		st.open(typ)
		st.buf = append(st.buf, `,"response":`...)
		st.buf = appendResponseObject(st.buf, st.s, st.q, st.id, "in_progress", 0)
		st.close("lifecycle", 0)
	}
	st.flush()
	for {
		rel, fin, ok := st.s.waitTokens(ctx, st.q)
		if !ok {
			return
		}
		for st.written < rel {
			st.appendDelta(min(st.q.chunk, rel-st.written))
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
	if st.fault.Kind == FaultDisconnect { // fewer tokens than ARG: cut before the end
		st.flush()
		panic(http.ErrAbortHandler)
	}
	st.appendEnd()
	st.flush()
}

// open appends the start of an event of type typ, up to its sequence_number.
func (st *respStreamer) open(typ string) {
	b := append(st.buf, "event: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"type\":\""...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	st.buf = strconv.AppendInt(b, int64(st.seqNo), 10)
	st.seqNo++
}

// close ends the event begun by open and notes it for the truth log.
func (st *respStreamer) close(kind string, tokens int) {
	st.buf = append(st.buf, "}\n\n"...)
	st.pending = append(st.pending, TruthEvent{RequestID: st.id, Seq: st.events, Tokens: tokens, Kind: kind})
	st.events++
}

// appendItem appends `,"item_id":"msg_…","output_index":0` (and content_index when part).
func (st *respStreamer) appendItem(part bool) {
	b := append(st.buf, `,"item_id":`...)
	b = appendJSONString(b, itemID(st.id))
	b = append(b, `,"output_index":0`...)
	if part {
		b = append(b, `,"content_index":0`...)
	}
	st.buf = b
}

// appendDelta appends the delta of the n tokens just generated, after the output item and
// content part events when it is the first.
func (st *respStreamer) appendDelta(n int) {
	first := st.written == 0
	if first {
		st.open("response.output_item.added")
		st.buf = append(st.buf, `,"output_index":0,"item":{"id":`...)
		st.buf = appendJSONString(st.buf, itemID(st.id))
		st.buf = append(st.buf, `,"type":"message","role":"assistant","status":"in_progress","content":[]}`...)
		st.close("lifecycle", 0)
		st.open("response.content_part.added")
		st.appendItem(true)
		st.buf = append(st.buf, `,"part":{"type":"output_text","annotations":[],"text":""}`...)
		st.close("lifecycle", 0)
	}
	st.open("response.output_text.delta")
	st.appendItem(true)
	st.buf = append(st.buf, `,"delta":"`...)
	for i := st.written; i < st.written+n; i++ {
		st.buf = append(st.buf, outputPieces[outputWord(st.q.textSeed, i)]...)
	}
	st.buf = append(st.buf, `","logprobs":[]`...)
	st.written += n
	st.close("content", n)
	if c := st.q.cached.Load(); first && c >= 0 { // the prefill that made it knew its cache hit
		ev := &st.pending[len(st.pending)-1]
		ev.CachedTokens, ev.hasCached = int(c), true
	}
}

// appendText appends the output text written so far as a JSON string's contents.
func (st *respStreamer) appendText() {
	for i := range st.written {
		st.buf = append(st.buf, outputPieces[outputWord(st.q.textSeed, i)]...)
	}
}

// appendEnd appends the events that close the output item and, unless no_done, the
// response.completed event with the usage.
func (st *respStreamer) appendEnd() {
	st.open("response.output_text.done")
	st.appendItem(true)
	st.buf = append(st.buf, `,"text":"`...)
	st.appendText()
	st.buf = append(st.buf, `","logprobs":[]`...)
	st.close("lifecycle", 0)
	st.open("response.content_part.done")
	st.appendItem(true)
	st.buf = append(st.buf, `,"part":{"type":"output_text","annotations":[],"text":"`...)
	st.appendText()
	st.buf = append(st.buf, `"}`...)
	st.close("lifecycle", 0)
	st.open("response.output_item.done")
	st.buf = append(st.buf, `,"output_index":0,"item":{"id":`...)
	st.buf = appendJSONString(st.buf, itemID(st.id))
	st.buf = append(st.buf, `,"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","annotations":[],"text":"`...)
	st.appendText()
	st.buf = append(st.buf, `"}]}`...)
	st.close("lifecycle", 0)
	if st.fault.Kind == FaultNoDone {
		return
	}
	st.open("response.completed")
	st.buf = append(st.buf, `,"response":`...)
	st.buf = appendResponseObject(st.buf, st.s, st.q, st.id, "completed", st.written)
	st.close("done", 0)
}

// strike applies a mid-stream fault once its token count is reached. It returns false when
// the stream has ended.
func (st *respStreamer) strike(ctx context.Context) bool {
	if st.struck || st.fault.Kind == "" || st.written < st.strikeAt {
		return true
	}
	switch st.fault.Kind {
	case FaultDisconnect:
		st.flush()
		panic(http.ErrAbortHandler) // the connection closes without the chunked terminator
	case FaultErrorEvent: // OpenAI's error event; the stream ends without a terminal event
		st.open("error")
		st.buf = append(st.buf, `,"code":"server_error","message":"simulated engine error (servebench sim fault error_event)","param":null`...)
		st.close("error", 0)
		st.flush()
		return false
	case FaultAbort: // the engine gave up: response.failed with the response's error
		st.open("response.failed")
		st.buf = append(st.buf, `,"response":`...)
		st.buf = appendResponseObject(st.buf, st.s, st.q, st.id, "failed", 0)
		st.close("abort", 0)
		st.flush()
		return false
	case FaultStall:
		st.flush()
		sleepCtx(ctx, st.fault.Delay)
	case FaultMalformedJSON:
		st.buf = append(st.buf, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"\n\n"...)
		st.pending = append(st.pending, TruthEvent{RequestID: st.id, Seq: st.events, Kind: "malformed"})
		st.events++
	}
	st.struck = true
	return true
}

// flush writes the buffer, flushes it to the connection, then reports its events as truth.
func (st *respStreamer) flush() {
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
