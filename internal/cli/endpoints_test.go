package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servebench/internal/peertest"
	"servebench/record"
	"servebench/sim"
)

// endpointRun runs servebench run with args against url and returns its measured records
// and the text summary; it fails the test unless every measured request completed.
func endpointRun(t *testing.T, url string, args ...string) ([]record.Record, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errs := runMain(t, append([]string{"run", "-q", "--url", url, "-o", p}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, recs := readRecords(t, p)
	var measured []record.Record
	for _, r := range recs {
		if r.Phase != record.PhaseMeasure {
			continue
		}
		if !r.OK() {
			t.Errorf("request %d failed: %s %s", r.ID, r.ErrorClass, r.Error)
		}
		measured = append(measured, r)
	}
	return measured, out
}

// streamingRows are the lines of the text summary that only a streaming run has.
var streamingRows = []string{"TTFT", "ITL", "TPOT", "decode tok/s", "E2E", "output tok/s", "peak output"}

// checkPooling checks a pooling run's records (batch size, the server's prompt counts, no
// output asked for) and that its summary prints no streaming figure.
func checkPooling(t *testing.T, recs []record.Record, out string, batch, n int) {
	t.Helper()
	if len(recs) != n {
		t.Fatalf("%d measured requests, want %d", len(recs), n)
	}
	for _, r := range recs {
		if r.Inputs != batch || r.PromptTokensSource != record.SourceServer || r.PromptTokens <= 0 ||
			r.MaxTokens != 0 || r.FixedOutput || len(r.Events) != 0 || r.Done <= r.Sent {
			t.Errorf("request %d: inputs %d, prompt %d (%s), max_tokens %d, fixed %v, %d events, sent %d done %d",
				r.ID, r.Inputs, r.PromptTokens, r.PromptTokensSource, r.MaxTokens, r.FixedOutput, len(r.Events), r.Sent, r.Done)
		}
	}
	for _, row := range streamingRows {
		if strings.Contains(out, row) {
			t.Errorf("the summary of a pooling run prints %q:\n%s", row, out)
		}
	}
	if !strings.Contains(out, "latency ") || !strings.Contains(out, "input ") {
		t.Errorf("no latency or input throughput in:\n%s", out)
	}
}

// TestSimEndpoints runs each new API against the simulator: the Messages API streams with
// the server's counts, embeddings and rerank send batches whose prompt tokens the server
// counts, and their summaries show latency and input throughput, no TTFT or ITL.
func TestSimEndpoints(t *testing.T) {
	t.Parallel()
	_, url := startSimServer(t, func(c *sim.Config) {})
	t.Run("anthropic-messages", func(t *testing.T) {
		recs, out := endpointRun(t, url, "--api", "anthropic-messages", "--requests", "12", "--concurrency", "3",
			"--input-tokens", "64", "--output-tokens", "12")
		for _, r := range recs {
			if r.OutputTokens != 12 || r.OutputTokensSource != record.SourceServer || r.PromptTokensSource != record.SourceServer || len(r.Events) != 12 {
				t.Errorf("request %d: output %d (%s), prompt %s, %d events", r.ID, r.OutputTokens, r.OutputTokensSource, r.PromptTokensSource, len(r.Events))
			}
		}
		if !strings.Contains(out, "TTFT") {
			t.Errorf("a Messages API run streams: its summary has TTFT:\n%s", out)
		}
	})
	t.Run("openai-embeddings", func(t *testing.T) {
		recs, out := endpointRun(t, url, "--api", "openai-embeddings", "--batch-size", "8", "--requests", "12",
			"--concurrency", "3", "--input-tokens", "128")
		checkPooling(t, recs, out, 8, 12)
		for _, r := range recs { // the simulator counts words: the pieces add up to the prompt
			if r.PromptTokens != r.InputTokens {
				t.Errorf("request %d: the server counted %d prompt tokens of %d", r.ID, r.PromptTokens, r.InputTokens)
			}
		}
	})
	t.Run("rerank", func(t *testing.T) {
		recs, out := endpointRun(t, url, "--api", "rerank", "--batch-size", "4", "--requests", "12",
			"--concurrency", "3", "--input-tokens", "100")
		checkPooling(t, recs, out, 4, 12)
		for _, r := range recs { // each document is scored with the query: the query is counted 4 times
			if r.PromptTokens <= r.InputTokens || r.PromptTokens >= 2*r.InputTokens {
				t.Errorf("request %d: %d prompt tokens for a %d-token prompt cut into a query and 4 documents", r.ID, r.PromptTokens, r.InputTokens)
			}
		}
	})
}

// TestEndpointUsage: a batch size that means nothing is a usage error before any request.
func TestEndpointUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--api", "openai-embeddings", "--batch-size", "0"}, "--batch-size 0: want at least 1"},
		{[]string{"--api", "rerank", "--batch-size", "-2"}, "--batch-size -2"},
		{[]string{"--api", "openai-chat", "--batch-size", "4"}, "--batch-size applies to --api openai-embeddings and rerank"},
	} {
		code, _, errs := runMain(t, append([]string{"run", "--url", "http://127.0.0.1:1", "--requests", "1"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.msg) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want 2 with %q on one line", tc.args, code, errs, tc.msg)
		}
	}
}

// servesPath skips the test when the llama.cpp build at url has no route for path (404): an
// older build without the Messages API, or one started without --embeddings / --reranking.
func servesPath(t *testing.T, url, path, body string) {
	t.Helper()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusNotImplemented {
		t.Skipf("this llama.cpp build does not serve %s (HTTP %d)", path, resp.StatusCode)
	}
}

// TestLlamaCppEndpoints runs each new API against a real llama.cpp server (../shared/peers,
// started with --jinja, --embeddings --pooling mean, or --reranking): every request
// completes with the server's own token counts. Each part skips, with a message, when the
// server cannot be set up or its build lacks the endpoint.
func TestLlamaCppEndpoints(t *testing.T) {
	t.Parallel()
	t.Run("anthropic-messages", func(t *testing.T) {
		url := peertest.Llama(t, "tiny.gguf", "-t", "1", "-np", "2", "-c", "2048", "--jinja")
		servesPath(t, url, "/v1/messages", `{"max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`)
		recs, _ := endpointRun(t, url, "--api", "anthropic-messages", "--requests", "8", "--concurrency", "2",
			"--input-tokens", "48", "--output-tokens", "16")
		for _, r := range recs {
			if r.OutputTokens != 16 || r.OutputTokensSource != record.SourceServer || r.PromptTokensSource != record.SourceServer ||
				r.PromptTokens < 48 || len(r.Events) == 0 {
				t.Errorf("request %d: output %d (%s), prompt %d (%s), %d events", r.ID, r.OutputTokens, r.OutputTokensSource,
					r.PromptTokens, r.PromptTokensSource, len(r.Events))
			}
		}
	})
	t.Run("openai-embeddings", func(t *testing.T) {
		url := peertest.Llama(t, "tiny.gguf", "-t", "1", "-np", "2", "-c", "2048", "--embeddings", "--pooling", "mean")
		servesPath(t, url, "/v1/embeddings", `{"input":"hi"}`)
		recs, out := endpointRun(t, url, "--api", "openai-embeddings", "--batch-size", "4", "--requests", "8",
			"--concurrency", "2", "--input-tokens", "64")
		checkPooling(t, recs, out, 4, 8)
	})
	t.Run("rerank", func(t *testing.T) {
		url := peertest.Llama(t, "tiny.gguf", "-t", "1", "-np", "2", "-c", "2048", "--reranking")
		servesPath(t, url, "/v1/rerank", `{"query":"a","documents":["b"]}`)
		recs, out := endpointRun(t, url, "--api", "rerank", "--batch-size", "3", "--requests", "8",
			"--concurrency", "2", "--input-tokens", "64")
		checkPooling(t, recs, out, 3, 8)
	})
}

// TestAnthropicKeyRedacted: the Messages API sends --api-key as x-api-key, and a server
// that echoes it back in its errors does not get it into the records or the output, as
// with Authorization.
func TestAnthropicKeyRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-endpoints-0123456789"
	seen := make(chan string, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		case "/v1/messages":
			select {
			case seen <- r.Header.Get("X-Api-Key") + "|" + r.Header.Get("Authorization"):
			default:
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key %s"}}`, key)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, out, errs := runMain(t, "run", "--url", srv.URL, "--api", "anthropic-messages", "--api-key", key,
		"--requests", "2", "--concurrency", "1", "--warmup", "0", "--input-tokens", "16", "--output-tokens", "4", "-o", p)
	b, _ := os.ReadFile(p)
	for name, s := range map[string]string{"records": string(b), "stdout": out, "stderr": errs} {
		if strings.Contains(s, key) {
			t.Errorf("exit %d: the key is in the %s", code, name)
		}
	}
	if !strings.Contains(string(b), "invalid x-api-key") {
		t.Errorf("exit %d: the server's message is not in the records: %s %s", code, errs, b)
	}
	if got := <-seen; got != key+"|" {
		t.Errorf("x-api-key|Authorization = %q, want the key in x-api-key only", got)
	}
}
