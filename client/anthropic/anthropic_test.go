package anthropic

import (
	"context"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

func request() *client.Request {
	return &client.Request{Model: "m", Request: &workload.Request{ID: 1, OutputTokens: 6,
		Messages: []workload.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello there"}}}}
}

// TestTranscript replays llama.cpp's Messages stream: message_start is the first event
// with a message (like a chat role chunk), each text_delta one content event, the usage
// the prompt's from message_start and the output's from message_delta, and message_stop
// the end.
func TestTranscript(t *testing.T) {
	want := []string{"dispatch", "headers 200", "event choice usage 42/0", "event", "event content 0 ×6", "event", "event usage 42/6", "event done"}
	for _, chunk := range []int{0, 7} {
		srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "llamacpp-b11669-messages.sse"), Chunk: chunk})
		b, err := New(srv.Target(), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rec := &clienttest.Recorder{}
		if err := b.Do(context.Background(), request(), rec); err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		if got := rec.Events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("chunk %d:\n%s\nwant\n%s", chunk, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestBody checks the request: the path, the key in x-api-key (and not as a Bearer token),
// anthropic-version, the system prompt apart from the messages, max_tokens and ignore_eos.
func TestBody(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "llamacpp-b11669-messages.sse")})
	tg := srv.Target()
	tg.APIKey = "sk-secret"
	b, _ := New(tg, client.Options{})
	req := request()
	req.FixedOutput = true
	if err := b.Do(context.Background(), req, &clienttest.Recorder{}); err != nil {
		t.Fatal(err)
	}
	seen := <-srv.Req
	if seen.Path != "POST /v1/messages" || seen.Header.Get("X-Api-Key") != "sk-secret" || seen.Header.Get("Authorization") != "" ||
		seen.Header.Get("Anthropic-Version") != Version {
		t.Errorf("%s %v", seen.Path, seen.Header)
	}
	msgs, _ := seen.Body["messages"].([]any)
	if seen.Body["system"] != "be brief" || len(msgs) != 1 || seen.Body["max_tokens"] != 6.0 || seen.Body["ignore_eos"] != true ||
		seen.Body["stream"] != true || seen.Body["model"] != "m" {
		t.Errorf("body %v", seen.Body)
	}
	// a version the user sets wins
	tg.Header = map[string][]string{"Anthropic-Version": {"2099-01-01"}}
	b, _ = New(tg, client.Options{})
	_ = b.Do(context.Background(), request(), &clienttest.Recorder{})
	if v := (<-srv.Req).Header.Get("Anthropic-Version"); v != "2099-01-01" {
		t.Errorf("anthropic-version %q, want the user's", v)
	}
}

// TestHostile: what a broken or hostile server sends is a classified failure with a message
// that names it, never a success and never a hang.
func TestHostile(t *testing.T) {
	start := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n"
	delta := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
	for _, tc := range []struct {
		name, class, msg string
		s                clienttest.Stream
	}{
		{"HTML page", "decode", "got text/html", clienttest.Stream{Body: "<html><body>502 Bad Gateway</body></html>", CType: "text/html"}},
		{"bad JSON", "decode", "event 2", clienttest.Stream{Body: start + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\n\n"}},
		{"no type", "decode", "no type", clienttest.Stream{Body: start + "data: {\"index\":0}\n\n"}},
		{"huge event", "decode", "larger than", clienttest.Stream{Body: start + "data: {\"type\":\"ping\",\"x\":\"" + strings.Repeat("a", 17<<20) + "\"}\n\n"}},
		{"error event", "stream_error_event", "Overloaded", clienttest.Stream{Body: start + delta +
			"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"}},
		{"error payload", "stream_error_event", "boom", clienttest.Stream{Body: start + "data: {\"type\":\"error\",\"error\":{\"message\":\"boom\"}}\n\n"}},
		{"no message_stop", "truncated", "without its final object", clienttest.Stream{Body: start + delta}},
		{"negative usage", "decode", "usage.output_tokens = -5", clienttest.Stream{Body: start +
			"data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":-5}}\n\n"}},
		{"delta without delta", "decode", "without a delta", clienttest.Stream{Body: start + "data: {\"type\":\"content_block_delta\"}\n\n"}},
		{"401 with key echoed", "http_4xx", "invalid x-api-key", clienttest.Stream{Status: 401, CType: "application/json",
			Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-secret"}}`}},
	} {
		srv := clienttest.NewServer(t, tc.s)
		tg := srv.Target()
		tg.APIKey = "sk-secret"
		b, _ := New(tg, client.Options{})
		err := b.Do(context.Background(), request(), &clienttest.Recorder{})
		if got := clienttest.Class(t, err); got != tc.class || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want class %s with %q", tc.name, err, tc.class, tc.msg)
		}
		if err != nil && strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("%s: the key leaked: %v", tc.name, err)
		}
	}
}

// reasoner is a Recorder that notes reasoning calls.
type reasoner struct{ clienttest.Recorder }

func (r *reasoner) Reasoning()          { r.Calls = append(r.Calls, "reasoning") }
func (r *reasoner) ReasoningTokens(int) {}

// TestDeltaKinds: thinking is reasoning content, a tool call's JSON is content, a signature
// and empty text are not.
func TestDeltaKinds(t *testing.T) {
	var d decoder
	r := &reasoner{}
	for _, ev := range []string{
		`{"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"hmm"}}`,
		`{"type":"content_block_delta","delta":{"type":"signature_delta","signature":"abc"}}`,
		`{"type":"content_block_delta","delta":{"type":"text_delta","text":""}}`,
		`{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
		`{"type":"content_block_delta","delta":{"type":"text_delta","text":"ok"}}`,
	} {
		if _, err := d.Event([]byte(ev), r); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(r.Calls, ","); got != "reasoning,content 0,content 0,content 0" {
		t.Errorf("calls %s", got)
	}
}

// FuzzEvent: no payload makes the decoder panic, and a failure is always a decode or
// stream_error_event class.
func FuzzEvent(f *testing.F) {
	for _, s := range []string{`{"type":"message_start","message":{"usage":{"input_tokens":3}}}`,
		`{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}`, `{"type":"message_delta","usage":{"output_tokens":-1}}`,
		`{"type":"error","error":{"message":"m"}}`, `{"type":"message_stop"}`, `{`, `[]`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d decoder
		_, err := d.Event(data, &clienttest.Recorder{})
		if err != nil && err.Class != "decode" && err.Class != "stream_error_event" {
			t.Errorf("class %s", err.Class)
		}
	})
}
