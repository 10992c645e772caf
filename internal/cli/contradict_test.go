package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestServerCountsThatContradictTheStream: a chat server that streams a reasoning event and
// two answer events but reports reasoning_tokens 1000 of completion_tokens 3 gets a note with
// the figures, and its records keep the server's counts as sent.
func TestServerCountsThatContradictTheStream(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		case "/v1/chat/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			for _, d := range []string{
				`{"choices":[{"index":0,"delta":{"role":"assistant"}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"a"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}`,
				`{"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":3,"total_tokens":11,"completion_tokens_details":{"reasoning_tokens":1000}}}`,
				`[DONE]`,
			} {
				fmt.Fprintf(w, "data: %s\n\n", d)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errs := runMain(t, "run", "--url", srv.URL, "--api", "openai-chat", "--model", "m", "--requests", "3",
		"--concurrency", "1", "--warmup", "0", "--input-tokens", "8", "--output-tokens", "3", "-o", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	all := out + errs
	if !strings.Contains(all, "3 requests report reasoning token counts their streams contradict") ||
		!strings.Contains(all, "1000 reasoning tokens (server) of 3 output tokens, with 2 answer events") {
		t.Errorf("no note with the figures:\n%s", all)
	}
	_, recs := readRecords(t, p)
	for _, r := range recs {
		if r.ReasoningTokens != 1000 || r.OutputTokens != 3 {
			t.Errorf("request %d keeps reasoning %d of output %d, want the server's 1000 of 3", r.ID, r.ReasoningTokens, r.OutputTokens)
		}
	}
}
