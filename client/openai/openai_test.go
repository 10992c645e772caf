package openai

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/record"
)

// start is what every fresh request reports before its first event.
var start = []string{"dispatch", "connect", "connected", "headers 200"}

const llamaTimingsCompletions = " usage.cached_tokens=0 timings.cache_n=0 timings.predicted_ms=3.955 timings.predicted_n=16" +
	" timings.predicted_per_second=3792.6675094816687 timings.predicted_per_token_ms=0.26366666666666666" +
	" timings.prompt_ms=1.593 timings.prompt_n=14 timings.prompt_per_second=8788.449466415568" +
	" timings.prompt_per_token_ms=0.11378571428571428"

const llamaTimingsChat = " usage.cached_tokens=0 timings.cache_n=0 timings.predicted_ms=1.919 timings.predicted_n=8" +
	" timings.predicted_per_second=3647.7331943720687 timings.predicted_per_token_ms=0.27414285714285713" +
	" timings.prompt_ms=2.366 timings.prompt_n=32 timings.prompt_per_second=13524.936601859677" +
	" timings.prompt_per_token_ms=0.0739375"

// transcriptCases are served by a fake server and must produce exactly these Observer calls.
var transcriptCases = []struct {
	file, api string
	want      []string // after start
	class     string   // "" = success
	msg       string   // substring of the error message
}{
	{"llamacpp-b11669-completions.sse", APICompletions, []string{
		"event choice content 0 ×16",
		"event choice usage 14/16" + llamaTimingsCompletions,
		"event done"}, "", ""},
	// The shared capture's usage line is cut at 256 bytes (a capture artefact): invalid JSON.
	{"llamacpp-b11669-chat.sse", APIChat, []string{
		"event choice", "event choice content 0 ×8", "event choice", "event"}, record.ErrDecode, "event 11"},
	{"llamacpp-b11669-chat-live.sse", APIChat, []string{
		"event choice", "event choice content 0 ×8", "event choice",
		"event usage 32/8" + llamaTimingsChat, "event done"}, "", ""},
	// Ollama: a zero usage on every chunk is no count and no usage; the real one comes last.
	{"ollama-0.17.4-completions.sse", APICompletions, []string{
		"event choice content 0 ×32", "event choice", "event usage 4/32", "event done"}, "", ""},
	// vLLM continuous_usage_stats: the growth of completion_tokens is the event's token count.
	{"vllm-chat-continuous-usage.sse", APIChat, []string{
		"event choice usage 10/0", "event choice content 1 usage 10/1", "event choice content 3 usage 10/4",
		"event choice content 1 usage 10/5", "event choice usage 10/5", "event usage 10/5", "event done"}, "", ""},
	{"vllm-completions-usage-empty-text.sse", APICompletions, []string{
		"event choice content 0 ×2", "event choice usage 7/3", "event done"}, "", ""},
	{"reasoning-chat.sse", APIChat, []string{
		"event choice", "event choice reasoning content 0 ×2", "event choice", "event choice content 0",
		"event choice", "event usage 12/30", "event done"}, "", ""},
	{"error-event-after-200.sse", APICompletions, []string{"event choice content 0", "event"},
		record.ErrStreamErrorEvent, "CUDA out of memory. Tried to allocate 2.00 GiB"},
	{"error-event-typed.sse", APICompletions, []string{"event choice content 0", "event"},
		record.ErrStreamErrorEvent, "server overloaded, retry later"},
	{"error-object.sse", APICompletions, []string{"event"},
		record.ErrStreamErrorEvent, "maximum context length is 2048 tokens"},
	{"missing-done-finished.sse", APICompletions, []string{
		"event choice content 0 ×2", "event usage 3/2 done"}, "", ""},
	{"missing-done-unfinished.sse", APICompletions, []string{"event choice content 0 ×2"},
		record.ErrTruncated, "without [DONE]"},
	{"cut-mid-event.sse", APICompletions, []string{"event choice content 0"},
		record.ErrTruncated, "cut after 1 events"},
	{"crlf-keepalive-multiline.sse", APICompletions, []string{
		"event choice content 0 ×2", "event choice usage 3/2", "event done"}, "", ""},
	{"invalid-json.sse", APICompletions, []string{"event choice content 0", "event"},
		record.ErrDecode, "event 2"},
	// vLLM continuous_usage_stats with chunks whose text is empty while completion_tokens
	// grows (the second byte token of "é" held back, then a special token): their tokens are
	// carried to the next content event, so the counts 1+2+3 are completion_tokens but for
	// the final end-of-sequence token, which no content event follows.
	{"vllm-completions-continuous-usage-held-back.sse", APICompletions, []string{
		"event choice content 1 usage 7/1", "event choice usage 7/2", "event choice content 2 usage 7/3",
		"event choice usage 7/4", "event choice content 3 usage 7/6", "event choice usage 7/7",
		"event usage 7/7", "event done"}, "", ""},
	// A tool-calling answer streams only delta.tool_calls: each piece is generated output.
	{"vllm-chat-tool-calls.sse", APIChat, []string{
		"event choice", "event choice content 0 ×3", "event choice", "event usage 120/11", "event done"}, "", ""},
	// Ollama's OpenAI route: a reasoning delta, then the whole call in one delta.
	{"ollama-0.17-chat-tool-calls.sse", APIChat, []string{
		"event choice reasoning content 0", "event choice content 0", "event choice", "event usage 140/23", "event done"}, "", ""},
	// llama.cpp builds whose OpenAI routes report a failure as an "error:" SSE line.
	{"llamacpp-error-line-chat.sse", APIChat, []string{"event choice", "event choice content 0", "event"},
		record.ErrStreamErrorEvent, "Input prompt is too big compared to KV size"},
	// SGLang's OpenAI route when the scheduler aborts the request: finish_reason "abort".
	{"sglang-openai-abort.sse", APIChat, []string{"event choice content 0", "event choice"},
		record.ErrStreamErrorEvent, `finish_reason "abort"`},
}

func TestTranscripts(t *testing.T) {
	for _, tc := range transcriptCases {
		for _, chunk := range []int{0, 1, 7} { // whole, one byte per write, odd splits
			t.Run(tc.file+"/"+map[int]string{0: "whole", 1: "bytewise", 7: "7-byte"}[chunk], func(t *testing.T) {
				srv := newServer(t, clienttest.Stream{Body: clienttest.Transcript(t, tc.file), Chunk: chunk})
				rec, err := run(t, srv.target(), tc.api, 0)
				checkRun(t, rec, err, append(append([]string{}, start...), tc.want...), tc.class, tc.msg)
			})
		}
	}
}

// checkRun asserts the recorded calls, the error class and a message substring.
func checkRun(t *testing.T, rec *recorder, err error, want []string, cls, msg string) {
	t.Helper()
	if got := rec.events(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
	if got := clienttest.Class(t, err); got != cls {
		t.Errorf("error class = %q (%v), want %q", got, err, cls)
	}
	if err != nil && !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q does not contain %q", err, msg)
	}
	if rec.wrote != 1 {
		t.Errorf("WroteRequest called %d times, want 1", rec.wrote)
	}
}

// TestLargeEvent sends one event bigger than the 64 KiB read buffer (and bufio.Scanner's limit).
func TestLargeEvent(t *testing.T) {
	text := strings.Repeat("abc ", 40<<10) // 160 KiB
	body := `data: {"choices":[{"index":0,"text":"` + text + `","finish_reason":null}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":40960,"total_tokens":40961}}` + "\n\n" +
		"data: [DONE]\n\n"
	srv := newServer(t, clienttest.Stream{Body: body, Chunk: 1000})
	rec, err := run(t, srv.target(), APICompletions, 0)
	want := append(append([]string{}, start...), "event choice content 0", "event choice usage 1/40960", "event done")
	checkRun(t, rec, err, want, "", "")
}

func TestHTTPStatus(t *testing.T) {
	const key = "sk-secret-123"
	cases := []struct {
		status    int
		body, cls string
		msg       string
	}{
		{429, `{"error":{"message":"Too many requests","type":"rate_limit"}}`, record.ErrRateLimited, "Too many requests"},
		{500, `{"detail":"engine dead"}`, record.ErrHTTP5xx, "engine dead"},
		{503, "upstream\n  unavailable", record.ErrHTTP5xx, "upstream unavailable"},
		{404, `{"error":"model 'x' not found"}`, record.ErrHTTP4xx, "model 'x' not found"},
		{401, `{"error":{"message":"invalid api key sk-secret-123"}}`, record.ErrHTTP4xx, "invalid api key [REDACTED]"},
		{400, ``, record.ErrHTTP4xx, "Bad Request"},
	}
	for _, tc := range cases {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			srv := newServer(t, clienttest.Stream{Body: tc.body, Status: tc.status, CType: "application/json"})
			tg := srv.target()
			tg.APIKey = key
			rec, err := run(t, tg, APICompletions, 0)
			want := []string{"dispatch", "connect", "connected", "headers " + strconv.Itoa(tc.status)}
			checkRun(t, rec, err, want, tc.cls, tc.msg)
			var ce *client.Error
			if errors.As(err, &ce) && ce.Status != tc.status {
				t.Errorf("Status = %d, want %d", ce.Status, tc.status)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
}

// TestJSONAnswer: a server that ignores "stream" answers one JSON object: class decode, with why.
func TestJSONAnswer(t *testing.T) {
	srv := newServer(t, clienttest.Stream{Body: `{"choices":[{"text":"hi"}]}`, CType: "application/json"})
	rec, err := run(t, srv.target(), APICompletions, 0)
	checkRun(t, rec, err, start, record.ErrDecode, "expected an event stream")
}

func TestConnectError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	tg := client.Target{BaseURL: "http://" + addr, APIKey: "sk-secret-123", HTTP: client.NewHTTPClient(1, false)}
	rec, err := run(t, tg, APIChat, 0)
	if clienttest.Class(t, err) != record.ErrConnect {
		t.Fatalf("err = %v, want class connect", err)
	}
	if !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("message = %q", err)
	}
	if got := rec.events(); !reflect.DeepEqual(got, []string{"dispatch", "connect"}) {
		t.Errorf("calls = %q (ConnectStart without ConnectDone)", got)
	}
}

// TestConnectionReuse: the second request on a kept-alive connection reports no connect.
func TestConnectionReuse(t *testing.T) {
	srv := newServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "llamacpp-b11669-completions.sse")})
	tg := srv.target()
	b, _ := New(tg, APICompletions)
	// The stream ends with [DONE]: the body must still be read to its end, or net/http
	// closes the connection instead of keeping it.
	for i, want := range [][]string{start, {"dispatch", "headers 200"}, {"dispatch", "headers 200"}} {
		rec := &recorder{}
		if err := b.Do(context.Background(), request(), rec); err != nil {
			t.Fatal(err)
		}
		if got := rec.events()[:len(want)]; !reflect.DeepEqual(got, want) {
			t.Errorf("request %d: calls %q, want prefix %q", i, got, want)
		}
	}
}

// TestIdleTimeout: a stream that stops sending bytes ends as class timeout.
func TestIdleTimeout(t *testing.T) {
	body := `data: {"choices":[{"index":0,"text":" a","finish_reason":null}]}` + "\n\n"
	srv := newServer(t, clienttest.Stream{Body: body, Stall: true})
	began := time.Now()
	rec, err := run(t, srv.target(), APICompletions, 150*time.Millisecond)
	want := append(append([]string{}, start...), "event choice content 0")
	checkRun(t, rec, err, want, record.ErrTimeout, "no bytes from the server for 150ms")
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestIdleTimeoutKeepAlive: keep-alive comments are bytes, so they keep a slow stream alive.
func TestIdleTimeoutKeepAlive(t *testing.T) {
	srv := httptestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 6 {
			_, _ = w.Write([]byte(": ping\n\n"))
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
		_, _ = w.Write([]byte(clienttest.Transcript(t, "missing-done-finished.sse")))
	})
	rec, err := run(t, srv, APICompletions, 150*time.Millisecond)
	if err != nil || rec.calls[len(rec.calls)-1] != "done" {
		t.Fatalf("err = %v, calls = %q", err, rec.events())
	}
}

func httptestServer(t *testing.T, h http.HandlerFunc) client.Target {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return client.Target{BaseURL: srv.URL, HTTP: client.NewHTTPClient(1, false)}
}

func TestContextErrors(t *testing.T) {
	body := `data: {"choices":[{"index":0,"text":" a","finish_reason":null}]}` + "\n\n"
	srv := newServer(t, clienttest.Stream{Body: body, Stall: true})
	b, _ := New(srv.target(), APICompletions)

	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	err := b.Do(ctx, request(), &recorder{})
	if clienttest.Class(t, err) != record.ErrTimeout || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("deadline: %v, want class timeout", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	rec := &recorder{}
	go func() { time.Sleep(150 * time.Millisecond); cancel() }()
	if err := b.Do(ctx, request(), rec); clienttest.Class(t, err) != record.ErrCancelled {
		t.Errorf("cancel: %v, want class cancelled", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel() // cancelled before dispatch: the error is still a classified one
	if err := b.Do(ctx, request(), &recorder{}); clienttest.Class(t, err) != record.ErrCancelled {
		t.Errorf("pre-cancelled: %v, want class cancelled", err)
	}
}
