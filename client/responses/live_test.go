package responses

import (
	"context"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/internal/peertest"
	"servebench/workload"
)

// TestLive sends /v1/responses requests to a real llama.cpp server (tiny.gguf, whose model
// never stops early): ignore_eos and max_output_tokens give exactly the asked length, every
// delta is a content event, response.completed ends the stream with its usage, and
// llama.cpp's timings arrive as figures.
func TestLive(t *testing.T) {
	url := peertest.Llama(t, "tiny.gguf", "-t", "1", "-np", "2", "-c", "1024")
	b, err := Shape.New(client.Target{BaseURL: url, HTTP: client.NewHTTPClient(2, false)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rec := &clienttest.Recorder{}
		req := &client.Request{FixedOutput: true, Request: &workload.Request{ID: i, OutputTokens: 16,
			Messages: []workload.Message{{Role: "user", Content: "hello the server model"}}}}
		if err := b.Do(context.Background(), req, rec); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(rec.Events(), "|")
		if !strings.HasSuffix(got, "/16 done") || !strings.Contains(got, "content 0") || rec.Figures["timings.predicted_n"] != 16 {
			t.Errorf("request %d: %s, figures %v", i, got, rec.Figures)
		}
	}
}
