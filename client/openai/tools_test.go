package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
)

// toolRecorder is a recorder that also logs tool-call pieces.
type toolRecorder struct {
	recorder
	pieces []string
	args   string
}

func (r *toolRecorder) ToolCallDelta(index int, id, name, args string) {
	r.pieces = append(r.pieces, fmt.Sprintf("%d|%s|%s|%s", index, id, name, args))
	r.args += args
	r.add("tool")
}

// llamaToolStream is llama.cpp's shape of a streamed call (b11669's server_task_result:
// the role chunk, then the call opened with its id, name and an empty arguments string,
// then argument fragments, then finish_reason "tool_calls"), written here from its
// to_json_oaicompat_chat_stream; the peer test checks it against a live server.
const llamaToolStream = `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"id":"Xq3TbZ","type":"function","function":{"name":"get_weather","arguments":""}}]}}],"object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}],"object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}],"object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":"tool_calls","index":0,"delta":{}}],"object":"chat.completion.chunk"}

data: {"choices":[],"usage":{"completion_tokens":9,"prompt_tokens":40,"total_tokens":49},"object":"chat.completion.chunk"}

data: [DONE]

`

// TestToolCallPieces reads the tool-call pieces of vLLM's, Ollama's and llama.cpp's streams:
// every piece reaches the observer with its index, id, name and argument fragment, before the
// event's content call, and the joined arguments are the call's JSON.
func TestToolCallPieces(t *testing.T) {
	vllm, err := os.ReadFile("../testdata/vllm-chat-tool-calls.sse")
	if err != nil {
		t.Fatal(err)
	}
	ollama, err := os.ReadFile("../testdata/ollama-0.17-chat-tool-calls.sse")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, body string
		want       []string
		args       string
	}{
		{"vllm", string(vllm), []string{"0|chatcmpl-tool-9a1|get_weather|", `0|||{"city": "`, `0|||Paris"}`}, `{"city": "Paris"}`},
		{"ollama", string(ollama), []string{`0|call_k2x1|get_weather|{"city":"Paris"}`}, `{"city":"Paris"}`},
		{"llama.cpp", llamaToolStream, []string{"0|Xq3TbZ|get_weather|", `0|||{"city":`, `0|||"Paris"}`}, `{"city":"Paris"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer(t, clienttest.Stream{Body: c.body})
			b, err := New(srv.target(), APIChat)
			if err != nil {
				t.Fatal(err)
			}
			rec := &toolRecorder{}
			if err := b.Do(context.Background(), request(), rec); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(rec.pieces) != fmt.Sprint(c.want) {
				t.Fatalf("pieces %q, want %q", rec.pieces, c.want)
			}
			if !json.Valid([]byte(rec.args)) || rec.args != c.args {
				t.Errorf("joined arguments %q, want %q", rec.args, c.args)
			}
			for i, call := range rec.calls {
				if call == "tool" && (i+1 >= len(rec.calls) || rec.calls[i+1] != "content 0" && rec.calls[i+1] != "tool") {
					t.Errorf("calls %v: a tool piece must come before its event's content call", rec.calls)
				}
			}
		})
	}
}

// TestToolsInBody: the tools go out as given, tool_choice as a string or, for a tool's name,
// the named-function object; no tools, no keys.
func TestToolsInBody(t *testing.T) {
	list := json.RawMessage(`[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`)
	for _, c := range []struct {
		choice string
		want   string
	}{{"auto", `"auto"`}, {"required", `"required"`}, {"f", `{"function":{"name":"f"},"type":"function"}`}, {"", ""}} {
		b := &Backend{chat: true}
		req := request()
		req.Tools = &client.Tools{List: list, Choice: c.choice}
		body, err := b.body(req)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		if string(m["tools"]) != string(list) || string(m["tool_choice"]) != c.want {
			t.Errorf("choice %q: tools %s, tool_choice %s; want %s, %s", c.choice, m["tools"], m["tool_choice"], list, c.want)
		}
	}
	b := &Backend{chat: true}
	body, _ := b.body(request())
	var m map[string]json.RawMessage
	_ = json.Unmarshal(body, &m)
	if _, ok := m["tools"]; ok {
		t.Errorf("a request without tools sent %s", m["tools"])
	}
}
