package openai

import (
	"strings"
	"testing"
)

// TestReasoningEvents checks that a reasoning-only event (either field name) is reported as
// reasoning before its Content call, an event with answer text (alone, or beside the end of
// the reasoning) or a tool call is not, and usage.completion_tokens_details.reasoning_tokens
// reaches the observer.
func TestReasoningEvents(t *testing.T) {
	var d decoder
	rec := &recorder{}
	for _, ev := range []string{
		`{"choices":[{"index":0,"delta":{"reasoning":" a"},"finish_reason":null}],"usage":{"prompt_tokens":2,"total_tokens":3,"completion_tokens":1}}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":" b","content":null},"finish_reason":null}],"usage":{"prompt_tokens":2,"total_tokens":4,"completion_tokens":2}}`,
		`{"choices":[{"index":0,"delta":{"content":" c","reasoning":" d"},"finish_reason":null}],"usage":{"prompt_tokens":2,"total_tokens":6,"completion_tokens":4}}`,
		`{"choices":[{"index":0,"delta":{"reasoning":" e","tool_calls":[{"index":0}]},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":" f"},"finish_reason":"stop"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":2,"total_tokens":8,"completion_tokens":6,"completion_tokens_details":{"reasoning_tokens":3}}}`,
	} {
		rec.EventRead()
		if err := d.event([]byte(ev), rec); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"event choice reasoning content 1 usage 2/1", "event choice reasoning content 1 usage 2/2",
		"event choice content 2 usage 2/4", "event choice content 0 ×2", "event usage 2/6 reasoning_tokens 3"}
	if got := rec.events(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestReasoningTokensNotACount: a reasoning token count out of range is a decode error.
func TestReasoningTokensNotACount(t *testing.T) {
	var d decoder
	err := d.event([]byte(`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens_details":{"reasoning_tokens":-3}}}`), nopObserver{})
	if err == nil || !strings.Contains(err.Msg, "usage.completion_tokens_details.reasoning_tokens = -3") {
		t.Errorf("reasoning_tokens = -3: %v", err)
	}
}
