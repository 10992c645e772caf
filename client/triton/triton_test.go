package triton

import (
	"context"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

// TestTranscripts: no counts, no end marker (a clean EOF after events is complete), and an
// error object inside the stream.
func TestTranscripts(t *testing.T) {
	for _, tc := range []struct {
		file, class string
		want        []string
	}{
		{"triton-24.08-generate-stream.sse", "", []string{"dispatch", "headers 200", "event choice content 0 ×2", "event choice", "event choice content 0 done"}},
		{"triton-error-event.sse", "stream_error_event", []string{"dispatch", "headers 200", "event choice content 0", "event"}},
	} {
		srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, tc.file), Chunk: 13})
		b, err := New(srv.Target(), "ensemble")
		if err != nil {
			t.Fatal(err)
		}
		rec := &clienttest.Recorder{}
		err = b.Do(context.Background(), &client.Request{Request: &workload.Request{Prompt: "Hi", OutputTokens: 4}}, rec)
		if got := clienttest.Class(t, err); got != tc.class {
			t.Errorf("%s: class %q (%v)", tc.file, got, err)
		}
		if got := rec.Events(); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n%s\nwant\n%s", tc.file, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
		if seen := <-srv.Req; seen.Path != "POST /v2/models/ensemble/generate_stream" || seen.Body["text_input"] != "Hi" || seen.Body["max_tokens"] != 4.0 {
			t.Errorf("%s %v", seen.Path, seen.Body)
		}
	}
	if _, err := New(client.Target{BaseURL: "http://x"}, ""); err == nil {
		t.Error("a triton backend without a model was accepted")
	}
}
