package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// msgEvent is the decoded shape of a streamed Messages API event.
type msgEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage struct {
			Input  int `json:"input_tokens"`
			Output int `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
	Delta *struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		StopReason string `json:"stop_reason"`
	} `json:"delta"`
	Usage *struct {
		Output int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func messagesBody(n int, stream bool) map[string]any {
	return map[string]any{"model": "", "max_tokens": n, "ignore_eos": true, "stream": stream, "system": "Be brief.",
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": words(9)}}}}}
}

// readMessages reads a Messages stream; every event's "event:" name must be its payload's type.
func readMessages(t *testing.T, resp *http.Response) []msgEvent {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d %s: %s", resp.StatusCode, ct, b)
	}
	raw, err := readSSE(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var evs []msgEvent
	for _, e := range raw {
		if e.comment {
			continue
		}
		var ev msgEvent
		if err := json.Unmarshal([]byte(e.data), &ev); err != nil {
			t.Fatalf("event %q: %v", e.data, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestMessagesStream: Anthropic's event sequence, one text delta per token, and the same
// prompt count as the chat route gives the same conversation (system first), so the two
// routes' figures are comparable.
func TestMessagesStream(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, fixedConfig(0, 0))
	evs := readMessages(t, post(t, base+"/v1/messages", messagesBody(7, true)))
	var types []string
	deltas := 0
	for _, e := range evs {
		if e.Type == "content_block_delta" {
			deltas++
			if e.Delta == nil || e.Delta.Type != "text_delta" || e.Delta.Text == "" {
				t.Errorf("delta %+v", e.Delta)
			}
			continue
		}
		types = append(types, e.Type)
	}
	want := "message_start content_block_start ping content_block_stop message_delta message_stop"
	if got := strings.Join(types, " "); got != want || deltas != 7 {
		t.Errorf("events %s with %d deltas, want %s with 7", got, deltas, want)
	}
	last := evs[len(evs)-2]
	if last.Usage == nil || last.Usage.Output != 7 || last.Delta.StopReason != "max_tokens" {
		t.Errorf("message_delta %+v", last)
	}
	chat := post(t, base+"/v1/chat/completions", map[string]any{"max_tokens": 1, "messages": []any{
		map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": words(9)}}})
	var c struct {
		Usage struct {
			Prompt int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	_ = json.NewDecoder(chat.Body).Decode(&c)
	chat.Body.Close()
	if in := evs[0].Message.Usage.Input; in == 0 || in != c.Usage.Prompt {
		t.Errorf("message_start input_tokens %d, chat prompt_tokens %d", in, c.Usage.Prompt)
	}
}

// TestMessagesNotStreamed: the whole message with its usage.
func TestMessagesNotStreamed(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, fixedConfig(0, 0))
	resp := post(t, base+"/v1/messages", messagesBody(5, false))
	defer resp.Body.Close()
	var m struct {
		Type    string `json:"type"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Usage struct {
			Output int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || m.Type != "message" || len(m.Content) != 1 || m.Usage.Output != 5 {
		t.Errorf("%v %+v", err, m)
	}
}

// TestMessagesErrors: bad requests get Anthropic's error object; the error_event fault
// sends Anthropic's error event and ends the stream; an HTTP fault answers its status.
func TestMessagesErrors(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, fixedConfig(0, 0))
	for _, tc := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}, "max_tokens: Field required"},
		{map[string]any{"max_tokens": 3, "messages": []any{}}, "at least one message"},
		{map[string]any{"max_tokens": 3, "messages": []any{map[string]any{"role": "system", "content": "hi"}}}, "want user or assistant"},
		{map[string]any{"max_tokens": 3, "messages": []any{map[string]any{"role": "user", "content": 7}}}, "content blocks"},
	} {
		resp := post(t, base+"/v1/messages", tc.body)
		var e msgEvent
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 400 || e.Type != "error" || e.Error == nil || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%v: %d %+v, want 400 invalid_request_error with %q", tc.body, resp.StatusCode, e.Error, tc.want)
		}
	}
	evs := readMessages(t, post(t, base+"/v1/messages", messagesBody(6, true), "X-Sim-Fault", "error_event=2"))
	if last := evs[len(evs)-1]; last.Type != "error" || last.Error == nil || !strings.Contains(last.Error.Message, "simulated engine error") {
		t.Errorf("error_event: last event %+v", last)
	}
	resp := post(t, base+"/v1/messages", messagesBody(6, true), "X-Sim-Fault", "http_429")
	resp.Body.Close()
	if resp.StatusCode != 429 {
		t.Errorf("http_429 fault: status %d", resp.StatusCode)
	}
}
