package responses

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

func request() *client.Request {
	return &client.Request{Model: "m", Request: &workload.Request{ID: 1, OutputTokens: 4,
		Messages: []workload.Message{{Role: "user", Content: "Why is the sky blue?"}}}}
}

// TestTranscripts replays Responses API streams in vLLM's shapes, whole and in 7-byte
// pieces: only deltas with text are content; output items and parts count for first_event
// (choice); the terminal event's usage is reported; errors carry the server's words.
func TestTranscripts(t *testing.T) {
	start := []string{"dispatch", "headers 200", "event ×2", "event choice ×2"}
	for _, tc := range []struct {
		file, class, msg string
		want             []string
	}{
		// an empty delta is not content; output_text.done, content_part.done and
		// output_item.done are output events without text
		{"openai-responses-vllm.sse", "", "", append(start, "event choice content 0 ×2", "event choice",
			"event choice content 0", "event choice ×3", "event usage 12/4 done")},
		// captured from llama.cpp b11669 (tiny.gguf, ignore_eos, 6 tokens): no sequence numbers
		{"llamacpp-b11669-responses.sse", "", "", append(start, "event choice content 0 ×6", "event choice ×3", "event usage 39/6 done")},
		{"openai-responses-reasoning.sse", "", "", append(start, "event choice content 0 ×3", "event choice ×2",
			"event choice content 0 ×2", "event usage 20/9 done")},
		// response.incomplete (max_output_tokens reached) is a complete, capped answer
		{"openai-responses-incomplete.sse", "", "", append(start, "event choice content 0 ×4", "event usage 12/4 done")},
		{"openai-responses-error-event.sse", "stream_error_event", "The server had an error while processing your request.",
			append(start, "event choice content 0 ×2", "event")},
		{"openai-responses-failed.sse", "stream_error_event", "server_error: EngineCore encountered an issue.",
			append(start, "event choice content 0", "event")},
		{"openai-responses-no-completed.sse", "truncated", "without its final object", nil},
		{"openai-responses-cut-mid-event.sse", "truncated", "stream cut after 5 events", nil},
	} {
		for _, chunk := range []int{0, 7} {
			srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, tc.file), Chunk: chunk})
			b, _ := Shape.New(srv.Target())
			rec := &clienttest.Recorder{}
			err := b.Do(context.Background(), request(), rec)
			if got := clienttest.Class(t, err); got != tc.class || (err != nil && !strings.Contains(err.Error(), tc.msg)) {
				t.Errorf("%s/%d: class %q (%v), want %q with %q", tc.file, chunk, got, err, tc.class, tc.msg)
			}
			if got := rec.Events(); tc.want != nil && strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s/%d:\n%s\nwant\n%s", tc.file, chunk, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		}
	}
}

// TestFigures: cached input tokens are reported under the chat backend's name, so the
// prefix-cache warning reads them, and reasoning tokens beside them.
func TestFigures(t *testing.T) {
	for file, want := range map[string]map[string]float64{
		"openai-responses-vllm.sse":      {"usage.cached_tokens": 8, "usage.reasoning_tokens": 0},
		"openai-responses-reasoning.sse": {"usage.cached_tokens": 0, "usage.reasoning_tokens": 6},
		"llamacpp-b11669-responses.sse":  {"usage.cached_tokens": 11, "timings.cache_n": 11, "timings.predicted_n": 6, "timings.prompt_n": 28},
	} {
		srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, file)})
		b, _ := Shape.New(srv.Target())
		rec := &clienttest.Recorder{}
		if err := b.Do(context.Background(), request(), rec); err != nil {
			t.Fatal(err)
		}
		for k, v := range want {
			if got, ok := rec.Figures[k]; !ok || got != v {
				t.Errorf("%s: %s = %v (%v), want %v", file, k, got, ok, v)
			}
		}
	}
}

// TestHostile: bodies that are not a Responses stream fail with a class and a message that
// says what came instead; none is counted as a complete answer.
func TestHostile(t *testing.T) {
	const html = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
	for _, tc := range []struct {
		name, class, msg string
		s                clienttest.Stream
	}{
		{"html page", "decode", "expected an event stream, got text/html", clienttest.Stream{Body: html, CType: "text/html"}},
		{"html as an event stream", "truncated", "after 0 events", clienttest.Stream{Body: html}},
		{"html error status", "http_5xx", "502 Bad Gateway", clienttest.Stream{Body: html, Status: 502, CType: "text/html"}},
		{"json error status", "http_4xx", "max_output_tokens must be at least 1", clienttest.Stream{Status: 400, CType: "application/json",
			Body: `{"error":{"message":"max_output_tokens must be at least 1","type":"invalid_request_error","param":"max_output_tokens","code":null}}`}},
		// a chat completions stream (a proxy routing /v1/responses to the wrong place)
		{"chat chunks", "decode", `no "type"`, clienttest.Stream{Body: `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}` + "\n\ndata: [DONE]\n\n"}},
		{"error type without event line", "stream_error_event", "rate_limit_exceeded: Rate limit reached", clienttest.Stream{
			Body: `data: {"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached","param":null,"sequence_number":3}` + "\n\n"}},
		{"bare error object", "stream_error_event", "CUDA out of memory", clienttest.Stream{
			Body: `data: {"error":{"message":"CUDA out of memory","type":"InternalServerError","code":500}}` + "\n\n"}},
		{"failed without message", "stream_error_event", `status "failed"`, clienttest.Stream{
			Body: `data: {"type":"response.failed","response":{"status":"failed","error":null}}` + "\n\n"}},
		{"completed but cancelled", "stream_error_event", `status "cancelled"`, clienttest.Stream{
			Body: `data: {"type":"response.completed","response":{"status":"cancelled","usage":null}}` + "\n\n"}},
		{"completed without response", "decode", `has no "response"`, clienttest.Stream{
			Body: `data: {"type":"response.completed"}` + "\n\n"}},
		{"not json", "decode", "event 1", clienttest.Stream{Body: "data: {\"type\":\"response.output_text.delta\",\"delta\":\"x\n\n"}},
		{"negative usage", "decode", "usage.output_tokens = -3 is not a token count", clienttest.Stream{
			Body: `data: {"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":2,"output_tokens":-3}}}` + "\n\n"}},
		{"huge cached count", "decode", "usage.input_tokens_details.cached_tokens", clienttest.Stream{
			Body: `data: {"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":2,"output_tokens":3,"input_tokens_details":{"cached_tokens":4000000000}}}}` + "\n\n"}},
	} {
		srv := clienttest.NewServer(t, tc.s)
		b, _ := Shape.New(srv.Target())
		err := b.Do(context.Background(), request(), &clienttest.Recorder{})
		if got := clienttest.Class(t, err); got != tc.class || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want class %s with %q", tc.name, err, tc.class, tc.msg)
		}
	}
}

// TestBody pins the request: chat messages as the input list, max_output_tokens, store
// off, ignore_eos for a fixed output length (vLLM has no min_tokens here), sampling, and the
// user's extra keys over ours.
func TestBody(t *testing.T) {
	temp := 0.5
	for _, tc := range []struct {
		name string
		req  *client.Request
		want map[string]any
		not  []string
	}{
		{"chat", request(), map[string]any{"model": "m", "stream": true, "store": false, "max_output_tokens": 4.0}, []string{"ignore_eos", "min_tokens", "temperature"}},
		{"fixed", func() *client.Request {
			r := request()
			r.FixedOutput, r.Sampling.Temperature, r.Sampling.ExtraBody = true, &temp, map[string]any{"store": true, "top_k": 5}
			return r
		}(), map[string]any{"ignore_eos": true, "temperature": 0.5, "store": true, "top_k": 5.0}, []string{"min_tokens", "stream_options"}},
		{"prompt", &client.Request{Request: &workload.Request{ID: 2, Prompt: "Hello"}}, map[string]any{"input": "Hello"}, []string{"model", "max_output_tokens"}},
	} {
		srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "openai-responses-vllm.sse")})
		b, _ := Shape.New(srv.Target())
		if err := b.Do(context.Background(), tc.req, &clienttest.Recorder{}); err != nil {
			t.Fatal(err)
		}
		seen := <-srv.Req
		if seen.Path != "POST /v1/responses" || seen.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("%s: %s Accept %q", tc.name, seen.Path, seen.Header.Get("Accept"))
		}
		for k, v := range tc.want {
			if seen.Body[k] != v {
				t.Errorf("%s: %s = %#v, want %#v", tc.name, k, seen.Body[k], v)
			}
		}
		for _, k := range tc.not {
			if _, ok := seen.Body[k]; ok {
				t.Errorf("%s: %s sent", tc.name, k)
			}
		}
		if tc.name == "chat" {
			in, _ := seen.Body["input"].([]any)
			m, _ := in[0].(map[string]any)
			if len(in) != 1 || m["role"] != "user" || m["content"] != "Why is the sky blue?" {
				t.Errorf("input %v", seen.Body["input"])
			}
		}
	}
}

// FuzzEvent: no payload makes the decoder panic, and a failure is always classified.
func FuzzEvent(f *testing.F) {
	for _, s := range []string{`{"type":"response.output_text.delta","delta":"x"}`, `{"type":"error","message":"m","code":5}`,
		`{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":1,"output_tokens":2}}}`,
		`{"type":"response.failed","response":{"error":{"message":"m","code":"c"}}}`, `[]`, `null`, `{"error":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &decoder{}
		_, err := d.Event(data, &clienttest.Recorder{})
		if err != nil && err.Class != "decode" && err.Class != "stream_error_event" {
			t.Errorf("class %q", err.Class)
		}
	})
}

// BenchmarkDelta is the decoder's cost per text delta, the event a stream is made of.
func BenchmarkDelta(b *testing.B) {
	data := []byte(`{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_7d2e5b","output_index":0,"content_index":1,"delta":" sky","logprobs":[]}`)
	d, o := &decoder{}, client.Observer(nopObserver{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Event(data, o); err != nil {
			b.Fatal(err)
		}
	}
}

type nopObserver struct{}

func (nopObserver) Dispatched()            {}
func (nopObserver) ConnectStart()          {}
func (nopObserver) ConnectDone()           {}
func (nopObserver) WroteRequest()          {}
func (nopObserver) Headers(int)            {}
func (nopObserver) EventRead()             {}
func (nopObserver) Choice()                {}
func (nopObserver) Content(int)            {}
func (nopObserver) Usage(int, int)         {}
func (nopObserver) Server(string, float64) {}
func (nopObserver) Done()                  {}

// FuzzFastDelta: wherever the fast path answers, encoding/json's path makes the same calls.
func FuzzFastDelta(f *testing.F) {
	for _, s := range []string{
		`{"type":"response.output_text.delta","sequence_number":5,"item_id":"m","output_index":0,"content_index":1,"delta":" sky","logprobs":[]}`,
		`{"type":"response.reasoning_text.delta","delta":""}`, `{"type":"response.output_text.delta","delta":null}`,
		`{"type":"response.output_text.delta","Delta":"x"}`, `{"type":"response.output_text.delta","delta":"x","delta":""}`,
		`{"type":"response.refusal.delta","delta":"\u00e9"}`, `{"type":"response.output_text.delta","delta":"x","error":null}`,
		`{"type":"response.output_text.delta","delta":5}`, `{"type":"response.output_\u0074ext.delta","delta":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimSpace(data)
		dl, ok := fastDelta(data)
		if !ok {
			return
		}
		var fast, slow clienttest.Recorder
		dl.report(&fast)
		end, err := (&decoder{}).decode(data, &slow)
		if end || err != nil || strings.Join(fast.Calls, " ") != strings.Join(slow.Calls, " ") {
			t.Errorf("%s: fast %q, slow %q (end %v, %v)", data, fast.Calls, slow.Calls, end, err)
		}
	})
}

// reasoningRecorder is a Recorder that also takes the reasoning calls.
type reasoningRecorder struct{ clienttest.Recorder }

func (r *reasoningRecorder) Reasoning() { r.Calls = append(r.Calls, "reasoning") }
func (r *reasoningRecorder) ReasoningTokens(n int) {
	r.Calls = append(r.Calls, "reasoning_tokens "+strconv.Itoa(n))
}

// TestReasoningDeltas: reasoning_text deltas are announced as reasoning just before their
// content event, the answer's output_text deltas are not, and the usage's reasoning tokens
// reach the observer, so a reasoning model's TTFO and answer ITL are measured over the
// Responses API as over chat.
func TestReasoningDeltas(t *testing.T) {
	for _, chunk := range []int{0, 7} {
		srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "openai-responses-reasoning.sse"), Chunk: chunk})
		b, _ := Shape.New(srv.Target())
		rec := &reasoningRecorder{}
		if err := b.Do(context.Background(), request(), rec); err != nil {
			t.Fatal(err)
		}
		var seq []string
		for i, c := range rec.Calls {
			switch {
			case c == "reasoning":
				if i+1 >= len(rec.Calls) || rec.Calls[i+1] != "content 0" {
					t.Errorf("chunk %d: reasoning not followed by its content event: %q", chunk, rec.Calls)
				}
				seq = append(seq, "R")
			case c == "content 0" && (i == 0 || rec.Calls[i-1] != "reasoning"):
				seq = append(seq, "A")
			case strings.HasPrefix(c, "reasoning_tokens"):
				seq = append(seq, c)
			}
		}
		if got := strings.Join(seq, " "); got != "R R R A A reasoning_tokens 6" {
			t.Errorf("chunk %d: %s, want three reasoning events, two answer events, 6 reasoning tokens", chunk, got)
		}
	}
}
