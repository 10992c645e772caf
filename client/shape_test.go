package client

import (
	"strings"
	"testing"
)

// TestShapeNew checks what Shape.New adds to a backend package's shape: the URL check naming
// the API, and the framing and Accept header of SSE or NDJSON.
func TestShapeNew(t *testing.T) {
	body := func(*Request) ([]byte, error) { return []byte("{}"), nil }
	s := Shape{API: "toy", Path: "/generate", Body: body}
	if _, err := s.New(Target{BaseURL: "127.0.0.1:8000"}); err == nil || !strings.HasPrefix(err.Error(), "toy: base URL") {
		t.Errorf("a base URL without a scheme: err %v, want one naming the API", err)
	}
	b, err := s.New(Target{BaseURL: "http://127.0.0.1:8000"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Path != "/generate" || b.Accept != "text/event-stream" || b.Frames == nil || b.Body == nil {
		t.Errorf("SSE shape: path %q accept %q frames set %v", b.Path, b.Accept, b.Frames != nil)
	}
	s.NDJSON = true
	if b, _ = s.New(Target{BaseURL: "http://127.0.0.1:8000"}); b.Accept != "application/x-ndjson" {
		t.Errorf("NDJSON shape: accept %q", b.Accept)
	}
	got, err := s.Backend(Target{BaseURL: "http://127.0.0.1:8000"}, Options{IdleTimeout: 7})
	if err != nil || got.(*EventBackend).IdleTimeout != 7 {
		t.Errorf("Backend: %v, %v: the options must be applied", got, err)
	}
}
