package client

import "testing"

// TestAPIBase: the API paths of the backends are cut off the URL a user gave, a proxy's own
// path prefix is kept, and a URL with no API path is left as it is.
func TestAPIBase(t *testing.T) {
	for _, c := range []struct{ in, base, dropped string }{
		{"http://h:8000", "http://h:8000", ""},
		{"http://h:8000/", "http://h:8000", ""},
		{"http://h:8000/v1", "http://h:8000", "/v1"},
		{"http://h:8000/v1/", "http://h:8000", "/v1"},
		{"http://h:8000/v1/completions", "http://h:8000", "/v1/completions"},
		{"http://h:8000/v1/chat/completions", "http://h:8000", "/v1/chat/completions"},
		{"http://h:8000/v1/responses", "http://h:8000", "/v1/responses"},
		{"http://h:8000/v1/messages", "http://h:8000", "/v1/messages"},
		{"http://h:8000/v1/embeddings", "http://h:8000", "/v1/embeddings"},
		{"http://h:8000/v1/rerank", "http://h:8000", "/v1/rerank"},
		{"http://h:8080/completion", "http://h:8080", "/completion"},
		{"http://h:11434/api/generate", "http://h:11434", "/api/generate"},
		{"http://h:11434/api/chat", "http://h:11434", "/api/chat"},
		{"http://h:3000/generate_stream", "http://h:3000", "/generate_stream"},
		{"http://h:30000/generate", "http://h:30000", "/generate"},
		{"http://h:8000/v2/models/ensemble/generate_stream", "http://h:8000", "/v2/models/ensemble/generate_stream"},
		{"http://h:8000/v2/health/ready", "http://h:8000", "/v2/health/ready"},
		{"http://h:8000/metrics", "http://h:8000", "/metrics"},
		{"https://u:p@h/llama/v1/chat/completions", "https://u:p@h/llama", "/v1/chat/completions"},
		{"http://h/llama/", "http://h/llama", ""},
		{"http://h/llama", "http://h/llama", ""},
		{"http://h/v1beta", "http://h/v1beta", ""},
		{"http://h/api", "http://h/api", ""},
		{"http://h/v2", "http://h/v2", ""},
		{"http://h/v1/completions?x=1", "http://h/v1/completions?x=1", ""},
	} {
		base, dropped := APIBase(c.in)
		if base != c.base || dropped != c.dropped {
			t.Errorf("APIBase(%q) = %q, %q; want %q, %q", c.in, base, dropped, c.base, c.dropped)
		}
	}
}
