package openai

import (
	"strings"
	"testing"
)

// texter is a recorder that wants the answer text.
type texter struct {
	recorder
	want bool
	text strings.Builder
}

func (x *texter) WantText() bool { return x.want }
func (x *texter) Text(s string)  { x.text.WriteString(s) }

// The answer text (chat delta.content, completions text, escapes decoded) reaches an observer
// that wants it; reasoning text and tool calls do not; an observer that does not want it gets
// none.
func TestAnswerTextPassed(t *testing.T) {
	events := []string{
		`{"choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":"{\"a\":"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":" \"é\n\"}","reasoning":"more"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"text":" tail"}]}`,
		`{"choices":[],"usage":{"prompt_tokens":2,"total_tokens":8,"completion_tokens":6}}`,
	}
	for _, want := range []bool{true, false} {
		var d decoder
		x := &texter{want: want}
		for _, ev := range events {
			x.EventRead()
			if err := d.event([]byte(ev), x); err != nil {
				t.Fatal(err)
			}
		}
		exp := "{\"a\": \"é\n\"} tail"
		if !want {
			exp = ""
		}
		if got := x.text.String(); got != exp {
			t.Errorf("want text %v: got %q, want %q", want, got, exp)
		}
	}
}
