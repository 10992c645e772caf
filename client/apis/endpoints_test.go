package apis

import (
	"context"
	"testing"

	"servebench/client"
	"servebench/internal/peertest"
	"servebench/sim"
	"servebench/sim/simtest"
)

// TestDetectWithNewEndpoints: serving the Messages API, embeddings and rerank changes no
// detection (those APIs have no probe): the simulator, which serves all three, is still
// OpenAI-compatible, and a llama.cpp server started for embeddings or reranking is still
// llama.cpp.
func TestDetectWithNewEndpoints(t *testing.T) {
	_, url := simtest.Start(t, sim.DefaultConfig())
	if got := Detect(context.Background(), client.Target{BaseURL: url}); got != "openai-completions" {
		t.Errorf("simulator detected as %s", got)
	}
	for _, flags := range [][]string{{"--embeddings", "--pooling", "mean"}, {"--reranking"}} {
		peer := peertest.Llama(t, "tiny.gguf", append([]string{"-t", "1", "-np", "1", "-c", "512"}, flags...)...)
		if got := Detect(context.Background(), client.Target{BaseURL: peer}); got != "llamacpp" {
			t.Errorf("llama.cpp %v detected as %s", flags, got)
		}
	}
}
