package llamacpp

import (
	"context"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

func request() *client.Request {
	return &client.Request{Request: &workload.Request{ID: 1, Prompt: "hello the", OutputTokens: 3}, FixedOutput: true}
}

// TestTranscript replays a stream captured from llama.cpp b11669's /completion: one listed
// token per event, then the final event with counts and timings.
func TestTranscript(t *testing.T) {
	for _, chunk := range []int{0, 9} {
		srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "llamacpp-b11669-completion-native.sse"), Chunk: chunk})
		b, _ := Shape.New(srv.Target())
		rec := &clienttest.Recorder{}
		if err := b.Do(context.Background(), request(), rec); err != nil {
			t.Fatal(err)
		}
		want := []string{"dispatch", "headers 200", "event choice content 1 ×3", "event choice usage 3/3 done"}
		if got := rec.Events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("chunk %d:\n%s\nwant\n%s", chunk, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if rec.Figures["timings.predicted_n"] != 3 || rec.Figures["timings.predicted_per_token_ms"] == 0 {
			t.Errorf("timings %v", rec.Figures)
		}
		seen := <-srv.Req
		if seen.Path != "POST /completion" || seen.Body["n_predict"] != 3.0 || seen.Body["ignore_eos"] != true {
			t.Errorf("%s %v", seen.Path, seen.Body)
		}
	}
}

// TestSplitCharacterAndMissingStop: tokens of an event without text (half a UTF-8
// character) are carried to the next text event; a stream without "stop": true is truncated.
func TestSplitCharacterAndMissingStop(t *testing.T) {
	body := "data: {\"content\":\"\",\"tokens\":[200],\"stop\":false}\n\ndata: {\"content\":\"é\",\"tokens\":[201],\"stop\":false}\n\n"
	srv := clienttest.NewServer(t, clienttest.Stream{Body: body})
	b, _ := Shape.New(srv.Target())
	rec := &clienttest.Recorder{}
	err := b.Do(context.Background(), request(), rec)
	if clienttest.Class(t, err) != "truncated" {
		t.Errorf("err %v", err)
	}
	if got := strings.Join(rec.Events(), "|"); got != "dispatch|headers 200|event choice|event choice content 2|event" && got != "dispatch|headers 200|event choice|event choice content 2" {
		t.Errorf("%s", got)
	}
}

// TestErrorLine: llama.cpp reports a failure during generation as an "error:" SSE line (not
// "data:"), carrying JSON: a stream_error_event with the server's own words, not truncated.
func TestErrorLine(t *testing.T) {
	for _, chunk := range []int{0, 1, 9} {
		srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "llamacpp-error-line-native.sse"), Chunk: chunk})
		b, _ := Shape.New(srv.Target())
		rec := &clienttest.Recorder{}
		err := b.Do(context.Background(), request(), rec)
		if clienttest.Class(t, err) != "stream_error_event" || !strings.Contains(err.Error(), "failed to decode the batch: KV cache is full") {
			t.Errorf("chunk %d: err %v", chunk, err)
		}
		want := "dispatch|headers 200|event choice content 1|event"
		if got := strings.Join(rec.Events(), "|"); got != want {
			t.Errorf("chunk %d: %s, want %s", chunk, got, want)
		}
	}
}

// TestCountNotAToken: a count that is not a count is a decode error naming the field.
func TestCountNotAToken(t *testing.T) {
	for _, tc := range []struct{ ev, msg string }{
		{`"tokens_predicted":-100,"tokens_evaluated":3`, "tokens_predicted = -100 is not a token count"},
		{`"tokens_predicted":3,"tokens_evaluated":-2`, "tokens_evaluated = -2"},
		{`"tokens_predicted":2000000000`, "tokens_predicted = 2000000000"},
		{`"tokens_predicted":1e23`, "tokens_predicted"},
		{`"tokens_predicted":"12"`, "tokens_predicted"},
	} {
		d := &decoder{}
		_, err := d.Event([]byte(`{"content":"","stop":true,`+tc.ev+`}`), &clienttest.Recorder{})
		if err == nil || err.Class != "decode" || !strings.Contains(err.Msg, tc.msg) {
			t.Errorf("%s: %v, want decode with %q", tc.ev, err, tc.msg)
		}
	}
}
