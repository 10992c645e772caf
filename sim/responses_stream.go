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
//	a reasoning item, when the request reasons (--reasoning-tokens): output_item.added,
//	  reasoning_text.delta per release, reasoning_text.done and output_item.done (index 0)
//	response.output_item.added, content_part.added with the first answer delta
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
	reason   int // output tokens that are reasoning (sim/reasoning.go), 0 for none
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
	st.reason = s.reasoningFor(p)
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
		st.buf = appendResponseObject(st.buf, st.s, st.q, st.id, "in_progress", 0, 0)
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

// appendItem appends `,"item_id":"msg_…","output_index":I` (and content_index when part):
// the message is output 1 after a reasoning item, else 0.
func (st *respStreamer) appendItem(part bool) {
	b := append(st.buf, `,"item_id":`...)
	b = appendJSONString(b, itemID(st.id))
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(st.msgIndex()), 10)
	if part {
		b = append(b, `,"content_index":0`...)
	}
	st.buf = b
}

// msgIndex is the output index of the message item.
func (st *respStreamer) msgIndex() int {
	if st.reason > 0 {
		return 1
	}
	return 0
}

// appendReasoning appends the reasoning_text delta of the next n tokens, all reasoning: the
// reasoning item's added event before the first, its done events after the last.
func (st *respStreamer) appendReasoning(n int) {
	first := st.written == 0
	if first {
		st.open("response.output_item.added")
		st.buf = append(st.buf, `,"output_index":0,"item":{"id":`...)
		st.buf = appendJSONString(st.buf, reasoningItemID(st.id))
		st.buf = append(st.buf, `,"summary":[],"type":"reasoning","status":"in_progress"}`...)
		st.close("lifecycle", 0)
	}
	st.open("response.reasoning_text.delta")
	st.buf = append(st.buf, `,"item_id":`...)
	st.buf = appendJSONString(st.buf, reasoningItemID(st.id))
	st.buf = append(st.buf, `,"output_index":0,"content_index":0,"delta":"`...)
	st.buf = appendWords(st.buf, st.q.textSeed, st.written, st.written+n)
	st.buf = append(st.buf, '"')
	st.written += n
	st.close("reasoning", n)
	st.noteCached(first)
	if st.written == st.reason {
		st.appendReasoningDone()
	}
}

// appendReasoningDone closes the reasoning item: reasoning_text.done, output_item.done.
func (st *respStreamer) appendReasoningDone() {
	st.open("response.reasoning_text.done")
	st.buf = append(st.buf, `,"item_id":`...)
	st.buf = appendJSONString(st.buf, reasoningItemID(st.id))
	st.buf = append(st.buf, `,"output_index":0,"content_index":0,"text":"`...)
	st.buf = appendWords(st.buf, st.q.textSeed, 0, st.written)
	st.buf = append(st.buf, '"')
	st.close("lifecycle", 0)
	st.open("response.output_item.done")
	st.buf = append(st.buf, `,"output_index":0,"item":{"id":`...)
	st.buf = appendJSONString(st.buf, reasoningItemID(st.id))
	st.buf = append(st.buf, `,"summary":[],"type":"reasoning","content":[{"type":"reasoning_text","text":"`...)
	st.buf = appendWords(st.buf, st.q.textSeed, 0, st.written)
	st.buf = append(st.buf, `"}],"status":"completed"}`...)
	st.close("lifecycle", 0)
}

// noteCached puts the prefix-cache hit on the stream's first content event in the truth log
// (the prefill that made it knew it).
func (st *respStreamer) noteCached(first bool) {
	if c := st.q.cached.Load(); first && c >= 0 {
		ev := &st.pending[len(st.pending)-1]
		ev.CachedTokens, ev.hasCached = int(c), true
	}
}

// appendDelta appends the n tokens just generated: their reasoning part first (when the
// request reasons), then the answer's output_text delta, after the message's output item and
// content part events when it is the answer's first.
func (st *respStreamer) appendDelta(n int) {
	if st.written < st.reason {
		r := min(n, st.reason-st.written)
		st.appendReasoning(r)
		if n -= r; n == 0 {
			return
		}
	}
	first := st.written == st.reason
	streamFirst := st.written == 0
	if first {
		st.open("response.output_item.added")
		st.buf = append(st.buf, `,"output_index":`...)
		st.buf = strconv.AppendInt(st.buf, int64(st.msgIndex()), 10)
		st.buf = append(st.buf, `,"item":{"id":`...)
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
	st.noteCached(streamFirst)
}

// appendText appends the answer text written so far (the reasoning excluded) as a JSON
// string's contents.
func (st *respStreamer) appendText() {
	st.buf = appendWords(st.buf, st.q.textSeed, min(st.reason, st.written), st.written)
}

// appendEnd appends the events that close the output item and, unless no_done, the
// response.completed event with the usage.
func (st *respStreamer) appendEnd() {
	if st.written <= st.reason { // the request ended while reasoning: no message item opened
		if st.written > 0 && st.written < st.reason {
			st.appendReasoningDone()
		}
		st.appendCompleted()
		return
	}
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
	st.buf = append(st.buf, `,"output_index":`...)
	st.buf = strconv.AppendInt(st.buf, int64(st.msgIndex()), 10)
	st.buf = append(st.buf, `,"item":{"id":`...)
	st.buf = appendJSONString(st.buf, itemID(st.id))
	st.buf = append(st.buf, `,"type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","annotations":[],"text":"`...)
	st.appendText()
	st.buf = append(st.buf, `"}]}`...)
	st.close("lifecycle", 0)
	st.appendCompleted()
}

// appendCompleted appends response.completed with the usage, unless no_done.
func (st *respStreamer) appendCompleted() {
	if st.fault.Kind == FaultNoDone {
		return
	}
	st.open("response.completed")
	st.buf = append(st.buf, `,"response":`...)
	st.buf = appendResponseObject(st.buf, st.s, st.q, st.id, "completed", st.written, st.reason)
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
		st.buf = appendResponseObject(st.buf, st.s, st.q, st.id, "failed", 0, 0)
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
