package sglang

import (
	"context"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

// TestTranscript: cumulative text, per-event counts from the running completion_tokens,
// meta_info figures at the finish, then [DONE].
func TestTranscript(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "sglang-0.4-generate.sse"), Chunk: 11})
	b, _ := New(srv.Target())
	rec := &clienttest.Recorder{}
	req := &client.Request{Request: &workload.Request{ID: 1, Prompt: "Hi", OutputTokens: 5}, FixedOutput: true}
	if err := b.Do(context.Background(), req, rec); err != nil {
		t.Fatal(err)
	}
	want := []string{"dispatch", "headers 200", "event choice content 1 usage 6/1", "event choice content 3 usage 6/4", "event choice content 1 usage 6/5", "event done"}
	if got := rec.Events(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rec.Figures["meta_info.e2e_latency"] != 0.0421 {
		t.Errorf("figures %v", rec.Figures)
	}
	seen := <-srv.Req
	sp, _ := seen.Body["sampling_params"].(map[string]any)
	if seen.Path != "POST /generate" || sp["max_new_tokens"] != 5.0 || sp["ignore_eos"] != true || sp["min_new_tokens"] != 5.0 {
		t.Errorf("%s %v", seen.Path, seen.Body)
	}
}
