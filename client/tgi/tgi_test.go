package tgi

import (
	"context"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

func request() *client.Request {
	return &client.Request{Model: "m", Request: &workload.Request{ID: 1, Prompt: "Hello", OutputTokens: 5}}
}

// TestTranscripts replays TGI streams: one token object per event gives exactly one token
// per event, carried to the next content event from an empty-text token (a UTF-8 character
// cut in two) or a special one, which are not content; the details carry the final counts.
func TestTranscripts(t *testing.T) {
	for _, tc := range []struct {
		file, class string
		want        []string
	}{
		{"tgi-3.0-generate-stream.sse", "", []string{"dispatch", "headers 200", "event choice content 1 ×2", "event choice", "event choice content 2", "event choice usage 6/5 done"}},
		// a special token mid-stream (Llama 3's <|python_tag|> before a tool call) is no
		// content, and its token goes to the next content event: 1+1+2+1 = 5 of 6, the 6th
		// being the final <|eom_id|>
		{"tgi-3.0-special-midstream.sse", "", []string{"dispatch", "headers 200", "event choice content 1 ×2", "event choice", "event choice content 2", "event choice content 1", "event choice usage 9/6 done"}},
		{"tgi-error-event.sse", "stream_error_event", []string{"dispatch", "headers 200", "event choice content 1", "event"}},
		{"cut-mid-event.sse", "truncated", nil},
	} {
		for _, chunk := range []int{0, 5} {
			srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, tc.file), Chunk: chunk})
			b, _ := Shape.New(srv.Target())
			rec := &clienttest.Recorder{}
			err := b.Do(context.Background(), request(), rec)
			if got := clienttest.Class(t, err); got != tc.class {
				t.Errorf("%s/%d: class %q (%v), want %q", tc.file, chunk, got, err, tc.class)
			}
			if got := rec.Events(); tc.want != nil && strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s/%d:\n%s\nwant\n%s", tc.file, chunk, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		}
	}
}

func TestBody(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "tgi-3.0-generate-stream.sse")})
	b, _ := Shape.New(srv.Target())
	if err := b.Do(context.Background(), request(), &clienttest.Recorder{}); err != nil {
		t.Fatal(err)
	}
	seen := <-srv.Req
	p, _ := seen.Body["parameters"].(map[string]any)
	if seen.Path != "POST /generate_stream" || seen.Body["inputs"] != "Hello" || p["max_new_tokens"] != 5.0 || p["details"] != true {
		t.Errorf("%s %v", seen.Path, seen.Body)
	}
}

// TestCountNotAToken: a details count that is not a count is a decode error naming it.
func TestCountNotAToken(t *testing.T) {
	for _, tc := range []struct{ details, msg string }{
		{`"generated_tokens":-100,"input_length":6`, "details.generated_tokens = -100 is not a token count"},
		{`"generated_tokens":3,"input_length":-1`, "details.input_length = -1"},
		{`"generated_tokens":2000000000`, "details.generated_tokens = 2000000000"},
		{`"generated_tokens":1e23`, "details.generated_tokens"},
		{`"generated_tokens":"12"`, "details.generated_tokens"},
	} {
		d := &decoder{}
		_, err := d.Event([]byte(`{"token":{"id":2,"text":"</s>","special":true},"generated_text":"x","details":{`+tc.details+`}}`), &clienttest.Recorder{})
		if err == nil || err.Class != "decode" || !strings.Contains(err.Msg, tc.msg) {
			t.Errorf("%s: %v, want decode with %q", tc.details, err, tc.msg)
		}
	}
}
