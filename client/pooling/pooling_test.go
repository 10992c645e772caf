package pooling

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

func request(prompt string) *client.Request {
	return &client.Request{Model: "m", Request: &workload.Request{ID: 1, Prompt: prompt, OutputTokens: 16}}
}

// recorder is a Recorder that also takes the batch size.
type recorder struct{ clienttest.Recorder }

func (r *recorder) Inputs(n int) { r.Calls = append(r.Calls, "inputs "+strconv.Itoa(n)) }

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		text string
		n    int
		want string
	}{
		{"a b c d e f", 3, "a b|c d|e f"},
		{"a b c d e", 2, "a b|c d e"},
		{"a b", 4, "a|b"}, // fewer words than pieces: fewer pieces, none empty
		{"", 3, ""},
		{"one", 0, "one"},
	} {
		if got := strings.Join(Split(tc.text, tc.n), "|"); got != tc.want {
			t.Errorf("Split(%q, %d) = %q, want %q", tc.text, tc.n, got, tc.want)
		}
	}
}

// TestLlamaAnswers replays llama.cpp b11669's answers (vectors cut to 8 numbers): the
// batch size is reported before the answer is read, the server's prompt tokens after it.
func TestLlamaAnswers(t *testing.T) {
	for _, tc := range []struct {
		file  string
		new   func(client.Target, client.Options) (client.Backend, error)
		batch int
		path  string
		want  string
	}{
		{"llamacpp-b11669-embeddings.json", Embeddings, 2, "POST /v1/embeddings", "dispatch,headers 200,inputs 2,done,usage 9/0"},
		{"llamacpp-b11669-rerank.json", Rerank, 3, "POST /v1/rerank", "dispatch,headers 200,inputs 3,done,usage 12/0"},
	} {
		srv := clienttest.NewServer(t, clienttest.Stream{Body: clienttest.Transcript(t, tc.file), CType: "application/json", Chunk: 50})
		b, err := tc.new(srv.Target(), client.Options{Batch: tc.batch})
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{}
		if err := b.Do(context.Background(), request("w1 w2 w3 w4 w5 w6 w7 w8"), rec); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got := strings.Join(rec.Calls, ","); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.file, got, tc.want)
		}
		seen := <-srv.Req
		if seen.Path != tc.path {
			t.Errorf("%s: path %s", tc.file, seen.Path)
		}
		switch tc.path {
		case "POST /v1/embeddings":
			if in, _ := seen.Body["input"].([]any); len(in) != 2 || in[0] != "w1 w2 w3 w4" || seen.Body["model"] != "m" {
				t.Errorf("embeddings body %v", seen.Body)
			}
		default:
			docs, _ := seen.Body["documents"].([]any)
			if seen.Body["query"] != "w1 w2" || len(docs) != 3 || seen.Body["top_n"] != 3.0 {
				t.Errorf("rerank body %v", seen.Body)
			}
		}
	}
}

// TestHostile: what a broken or hostile server answers is a classified failure naming what
// was wrong, never a success, and never the API key.
func TestHostile(t *testing.T) {
	vec := `{"index":0,"embedding":[0.1,0.2]}`
	for _, tc := range []struct {
		name, class, msg string
		rerank           bool
		s                clienttest.Stream
	}{
		{"HTML page", "decode", "got text/html", false, clienttest.Stream{Body: "<html>502 Bad Gateway</html>", CType: "text/html"}},
		{"bad JSON", "decode", "unexpected end of JSON", false, clienttest.Stream{Body: `{"data":[{`, CType: "application/json"}},
		{"huge answer", "decode", "larger than", false, clienttest.Stream{Body: `{"data":[` + strings.Repeat(vec+",", 200) + vec + `]}`, CType: "application/json"}},
		{"too few vectors", "decode", "1 embeddings for 2 inputs", false, clienttest.Stream{Body: `{"data":[` + vec + `]}`, CType: "application/json"}},
		{"repeated index", "decode", "out of range or repeated", false, clienttest.Stream{Body: `{"data":[` + vec + `,` + vec + `]}`, CType: "application/json"}},
		{"not a vector", "decode", "not a list of numbers", false, clienttest.Stream{Body: `{"data":[{"embedding":"AAAA"},{"embedding":[]}]}`, CType: "application/json"}},
		{"no data", "decode", "no data", false, clienttest.Stream{Body: `{"object":"list"}`, CType: "application/json"}},
		{"error object", "stream_error_event", "model is loading", false, clienttest.Stream{Body: `{"error":{"message":"model is loading"}}`, CType: "application/json"}},
		{"event stream", "decode", "invalid character", false, clienttest.Stream{Body: "data: {}\n\n"}},
		{"500 echoing the key", "http_5xx", "bad key", false, clienttest.Stream{Status: 500, CType: "application/json", Body: `{"error":{"message":"bad key sk-secret"}}`}},
		{"negative usage", "decode", "usage.prompt_tokens = -3", false, clienttest.Stream{Body: `{"data":[` + vec + `,{"index":1,"embedding":[1]}],"usage":{"prompt_tokens":-3}}`, CType: "application/json"}},
		{"rerank score not a number", "decode", "relevance_score", true, clienttest.Stream{Body: `{"results":[{"index":0,"relevance_score":"high"}]}`, CType: "application/json"}},
		{"rerank index out of range", "decode", "out of range", true, clienttest.Stream{Body: `{"results":[{"index":7,"relevance_score":0.5}]}`, CType: "application/json"}},
		{"rerank no results", "decode", "0 results for 2 documents", true, clienttest.Stream{Body: `{"results":[]}`, CType: "application/json"}},
		{"rerank too many results", "decode", "3 results for 2 documents", true, clienttest.Stream{Body: `{"results":[{"index":0,"relevance_score":1},{"index":1,"relevance_score":1},{"index":1,"relevance_score":1}]}`, CType: "application/json"}},
	} {
		srv := clienttest.NewServer(t, tc.s)
		tg := srv.Target()
		tg.APIKey = "sk-secret"
		newB := Embeddings
		if tc.rerank {
			newB = Rerank
		}
		be, _ := newB(tg, client.Options{Batch: 2})
		be.(*Backend).maxBody = 4096
		err := be.Do(context.Background(), request("a b c d e f"), &clienttest.Recorder{})
		if got := clienttest.Class(t, err); got != tc.class || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want class %s with %q", tc.name, err, tc.class, tc.msg)
		}
		if err != nil && strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("%s: the key leaked: %v", tc.name, err)
		}
	}
}

// TestStalledAnswer: an answer that stops mid-body is ended by the idle timeout as class
// timeout, not decoded.
func TestStalledAnswer(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Stream{Body: `{"data":[{"index":0,"embedding":[0.1`, CType: "application/json", Stall: true})
	be, _ := Embeddings(srv.Target(), client.Options{IdleTimeout: 200 * time.Millisecond})
	err := be.Do(context.Background(), request("a"), &clienttest.Recorder{})
	if got := clienttest.Class(t, err); got != "timeout" {
		t.Errorf("stalled answer: %v, want timeout", err)
	}
}

// FuzzAnswers: no answer makes the checks panic, and a failure is always a decode or
// stream_error_event class.
func FuzzAnswers(f *testing.F) {
	for _, s := range []string{`{"data":[{"index":0,"embedding":[1,2]}],"usage":{"prompt_tokens":3}}`,
		`{"results":[{"index":1,"relevance_score":0.5}]}`, `{"error":"x"}`, `{"data":null}`, `{`, `[]`, `null`} {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		for _, check := range []func([]byte, int, client.Observer) *client.Error{embedCheck, rerankCheck} {
			err := check(data, int(n%8)+1, &clienttest.Recorder{})
			if err != nil && err.Class != "decode" && err.Class != "stream_error_event" {
				t.Errorf("class %s", err.Class)
			}
		}
	})
}
