package llamacpp

import (
	"context"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/internal/peertest"
	"servebench/workload"
)

// TestLive sends /completion requests to a real llama.cpp server (tiny.gguf): every event
// lists one token, the final event's counts match, and the timings arrive.
func TestLive(t *testing.T) {
	url := peertest.Llama(t, "tiny.gguf", "-t", "1", "-np", "2", "-c", "1024")
	b, err := Shape.New(client.Target{BaseURL: url, HTTP: client.NewHTTPClient(2, false)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rec := &clienttest.Recorder{}
		req := &client.Request{Request: &workload.Request{ID: i, Prompt: "hello the server model", OutputTokens: 24}, FixedOutput: true}
		if err := b.Do(context.Background(), req, rec); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(rec.Events(), "|")
		// a token may be half a UTF-8 character (tiny.gguf has byte tokens): then one event
		// has no text and the next carries 2; the total is what matters
		total := strings.Count(got, "content 1")
		if !strings.HasSuffix(got, "usage 5/24 done") || rec.Figures["timings.predicted_n"] != 24 {
			t.Errorf("request %d: %s, figures %v", i, got, rec.Figures)
		}
		if total == 0 {
			t.Errorf("request %d: no per-event token counts: %s", i, got)
		}
	}
}
