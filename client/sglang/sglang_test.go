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
	b, _ := Shape.New(srv.Target())
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

// run replays file through a real backend over loopback HTTP, in chunks of chunk bytes.
func run(t *testing.T, file string, chunk int) (*clienttest.Recorder, error) {
	t.Helper()
	srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, file), Chunk: chunk})
	b, err := Shape.New(srv.Target())
	if err != nil {
		t.Fatal(err)
	}
	rec := &clienttest.Recorder{}
	req := &client.Request{Request: &workload.Request{ID: 1, Prompt: "Hi", OutputTokens: 8}}
	return rec, b.Do(context.Background(), req, rec)
}

// TestStreams: an abort inside the 200 stream is a failure with the scheduler's message; an
// event whose cumulative text did not grow is no content event and its tokens go to the next
// one; the incremental text form (--incremental-streaming-output) is read as such.
func TestStreams(t *testing.T) {
	for _, tc := range []struct {
		file, class, msg string
		want             []string
	}{
		{"sglang-0.4-generate-abort.sse", "stream_error_event", "Out of memory: the request was retracted and could not be rescheduled (status_code 503)",
			[]string{"dispatch", "headers 200", "event choice content 1 usage 6/1", "event choice content 1 usage 6/2", "event choice usage 6/2"}},
		{"sglang-0.4-generate-held-back.sse", "", "",
			[]string{"dispatch", "headers 200", "event choice content 1 usage 6/1", "event choice usage 6/2",
				"event choice content 2 usage 6/3", "event choice content 3 usage 6/6", "event done"}},
		{"sglang-0.4-generate-incremental.sse", "", "",
			[]string{"dispatch", "headers 200", "event choice content 1 usage 6/1", "event choice content 1 usage 6/2",
				"event choice usage 6/3", "event choice content 2 usage 6/4", "event done"}},
	} {
		for _, chunk := range []int{0, 7} {
			rec, err := run(t, tc.file, chunk)
			if got := clienttest.Class(t, err); got != tc.class || err != nil && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s/%d: class %q (%v), want %q with %q", tc.file, chunk, got, err, tc.class, tc.msg)
			}
			if got := rec.Events(); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s/%d:\n%s\nwant\n%s", tc.file, chunk, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		}
	}
}

// TestCountNotAToken: a meta_info token count that is not a non-negative integer of sane
// size is a decode error naming the field, never a success.
func TestCountNotAToken(t *testing.T) {
	for _, tc := range []struct{ meta, msg string }{
		{`"completion_tokens":-100`, "meta_info.completion_tokens = -100 is not a token count"},
		{`"completion_tokens":1e23`, "meta_info.completion_tokens = 1e+23 is not a token count"},
		{`"completion_tokens":"12"`, `meta_info.completion_tokens = "12" is not a token count`},
		{`"completion_tokens":2.5`, "meta_info.completion_tokens = 2.5"},
		{`"prompt_tokens":-1,"completion_tokens":1`, "meta_info.prompt_tokens = -1"},
		{`"cached_tokens":true,"completion_tokens":1`, "meta_info.cached_tokens = true"},
	} {
		d := &decoder{}
		_, err := d.Event([]byte(`{"text":"a","meta_info":{"finish_reason":null,`+tc.meta+`}}`), &clienttest.Recorder{})
		if err == nil || err.Class != "decode" || !strings.Contains(err.Msg, tc.msg) {
			t.Errorf("%s: %v, want decode with %q", tc.meta, err, tc.msg)
		}
	}
	d := &decoder{}
	if _, err := d.Event([]byte(`{"text":"a","meta_info":{"finish_reason":null,"prompt_tokens":null,"completion_tokens":3}}`), &clienttest.Recorder{}); err != nil {
		t.Errorf("a null count: %v", err)
	}
}
