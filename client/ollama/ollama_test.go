package ollama

import (
	"context"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

func request() *client.Request {
	return &client.Request{Model: "tiny", Request: &workload.Request{ID: 1, Prompt: "Hello", OutputTokens: 3}}
}

// TestTranscripts replays Ollama streams, whole and one/seven bytes per write (NDJSON lines
// split across reads), and checks the calls, the error class and the server figures.
func TestTranscripts(t *testing.T) {
	for _, tc := range []struct {
		file, api, class string
		want             []string
	}{
		{"ollama-0.17-generate.ndjson", APIGenerate, "", []string{"dispatch", "headers 200", "event choice content 0 ×3", "event usage 12/3 done"}},
		{"ollama-0.17-chat-thinking.ndjson", APIChat, "", []string{"dispatch", "headers 200", "event choice", "event choice content 0 ×2", "event usage 7/2 done"}},
		// a reasoning model thinks, then answers with a tool call only: both are output
		{"ollama-0.17-chat-tools.ndjson", APIChat, "", []string{"dispatch", "headers 200", "event choice", "event choice content 0 ×2", "event usage 30/12 done"}},
		{"ollama-0.17-generate-thinking.ndjson", APIGenerate, "", []string{"dispatch", "headers 200", "event choice content 0 ×2", "event choice", "event usage 9/3 done"}},
		{"ollama-error-midstream.ndjson", APIGenerate, "stream_error_event", []string{"dispatch", "headers 200", "event choice content 0", "event"}},
		{"ollama-cut-midline.ndjson", APIGenerate, "truncated", []string{"dispatch", "headers 200", "event choice content 0", "event"}},
	} {
		for _, chunk := range []int{0, 1, 7} {
			srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, tc.file), Chunk: chunk, CType: "application/x-ndjson"})
			b, err := New(srv.Target(), tc.api)
			if err != nil {
				t.Fatal(err)
			}
			rec := &clienttest.Recorder{}
			err = b.Do(context.Background(), request(), rec)
			if got := clienttest.Class(t, err); got != tc.class {
				t.Errorf("%s/%d: class %q (%v), want %q", tc.file, chunk, got, err, tc.class)
			}
			if got := rec.Events(); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s/%d:\n%s\nwant\n%s", tc.file, chunk, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		}
	}
}

func TestServerFiguresAndBody(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "ollama-0.17-generate.ndjson"), CType: "application/x-ndjson"})
	b, _ := New(srv.Target(), APIChat)
	rec := &clienttest.Recorder{}
	if err := b.Do(context.Background(), request(), rec); err != nil {
		t.Fatal(err)
	}
	if rec.Figures["ollama.eval_duration_ms"] != 30 || rec.Figures["ollama.eval_count"] != 3 || rec.Figures["ollama.prompt_eval_duration_ms"] != 8 {
		t.Errorf("server figures %v", rec.Figures)
	}
	seen := <-srv.Req
	opts, _ := seen.Body["options"].(map[string]any)
	if seen.Path != "POST /api/chat" || seen.Body["stream"] != true || opts["num_predict"] != 3.0 || seen.Body["messages"] == nil {
		t.Errorf("request %s %v", seen.Path, seen.Body)
	}
}

// TestRecorded0174CacheHit: Ollama 0.17.4 answered one 250-token prompt cold (with the model
// load) and then from its prompt cache. Both report the whole prompt in prompt_eval_count, so
// the usage is the same; the figures the cache-hit and model-load notes read differ.
func TestRecorded0174CacheHit(t *testing.T) {
	figures := map[string]map[string]float64{}
	for _, name := range []string{"cold", "cached"} {
		file := "ollama-0.17.4-generate-" + name + ".ndjson"
		srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, file), CType: "application/x-ndjson"})
		b, _ := New(srv.Target(), APIGenerate)
		rec := &clienttest.Recorder{}
		if err := b.Do(context.Background(), request(), rec); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if got := strings.Join(rec.Events(), "\n"); !strings.HasSuffix(got, "event usage 250/8 done") {
			t.Errorf("%s: %s, want usage 250/8", file, got)
		}
		figures[name] = rec.Figures
	}
	cold, hit := figures["cold"], figures["cached"]
	if cold["ollama.prompt_eval_count"] != hit["ollama.prompt_eval_count"] ||
		hit["ollama.prompt_eval_duration_ms"]*5 > cold["ollama.prompt_eval_duration_ms"] ||
		cold["ollama.load_duration_ms"] < 50 || hit["ollama.load_duration_ms"] > 50 {
		t.Errorf("figures cold %v, cached %v", cold, hit)
	}
}

func TestHTTPErrorKeepsServerMessage(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Stream{Body: `{"error":"model \"nope\" not found, try pulling it first"}`, Status: 404, CType: "application/json"})
	b, _ := New(srv.Target(), APIGenerate)
	err := b.Do(context.Background(), request(), &clienttest.Recorder{})
	if clienttest.Class(t, err) != "http_4xx" || !strings.Contains(err.Error(), "try pulling it first") {
		t.Errorf("%v", err)
	}
}

// TestCountNotAToken: a count that is not a count is a decode error naming the field.
func TestCountNotAToken(t *testing.T) {
	for _, tc := range []struct{ obj, msg string }{
		{`"prompt_eval_count":5,"eval_count":-100`, "eval_count = -100 is not a token count"},
		{`"prompt_eval_count":-1,"eval_count":3`, "prompt_eval_count = -1"},
		{`"eval_count":2000000000`, "eval_count = 2000000000"},
		{`"eval_count":1e23`, "eval_count"},
		{`"eval_count":"12"`, "eval_count"},
	} {
		d := &decoder{}
		_, err := d.Event([]byte(`{"response":"","done":true,`+tc.obj+`}`), &clienttest.Recorder{})
		if err == nil || err.Class != "decode" || !strings.Contains(err.Msg, tc.msg) {
			t.Errorf("%s: %v, want decode with %q", tc.obj, err, tc.msg)
		}
	}
}
