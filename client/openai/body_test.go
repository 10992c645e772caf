package openai

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/workload"
)

func ptr[T any](v T) *T { return &v }

// TestRequestBody checks the path, headers and JSON body of both APIs.
func TestRequestBody(t *testing.T) {
	base := map[string]any{
		"model": "tiny", "stream": true, "stream_options": map[string]any{"include_usage": true},
		"max_tokens": 16.0, "ignore_eos": true, "min_tokens": 16.0, "temperature": 0.5, "top_p": 0.9,
		"top_k": 5.0, // from ExtraBody
	}
	cases := []struct {
		api, path string
		req       *workload.Request
		key       string
		val       any
	}{
		{APICompletions, "POST /v1/completions", &workload.Request{Prompt: "Hi", OutputTokens: 16}, "prompt", "Hi"},
		{APIChat, "POST /v1/chat/completions",
			&workload.Request{Messages: []workload.Message{{Role: "system", Content: "S"}, {Role: "user", Content: "Q"}}, OutputTokens: 16},
			"messages", []any{map[string]any{"role": "system", "content": "S"}, map[string]any{"role": "user", "content": "Q"}}},
		{APIChat, "POST /v1/chat/completions", &workload.Request{Prompt: "Hi", OutputTokens: 16},
			"messages", []any{map[string]any{"role": "user", "content": "Hi"}}},
	}
	for _, tc := range cases {
		srv := newServer(t, clienttest.Stream{Body: clienttest.Transcript(t, "missing-done-finished.sse")})
		tg := srv.target()
		tg.APIKey = "sk-1"
		tg.Header = map[string][]string{"X-Team": {"perf"}}
		b, err := New(tg, tc.api)
		if err != nil {
			t.Fatal(err)
		}
		req := &client.Request{Request: tc.req, Model: "tiny", FixedOutput: true, Sampling: client.Sampling{
			Temperature: ptr(0.5), TopP: ptr(0.9), ExtraBody: map[string]any{"top_k": 5}}}
		if err := b.Do(context.Background(), req, &recorder{}); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{tc.key: tc.val}
		for k, v := range base {
			want[k] = v
		}
		seen := <-srv.Req
		if got := seen.Body; !reflect.DeepEqual(got, want) {
			t.Errorf("%s body:\n got %v\nwant %v", tc.api, got, want)
		}
		if got := seen.Path; got != tc.path {
			t.Errorf("path = %q, want %q", got, tc.path)
		}
		h := seen.Header
		for k, v := range map[string]string{"Authorization": "Bearer sk-1", "Accept": "text/event-stream",
			"Content-Type": "application/json", "X-Team": "perf"} {
			if h.Get(k) != v {
				t.Errorf("header %s = %q, want %q", k, h.Get(k), v)
			}
		}
	}
}

// TestExtraBodyOverrides: the user's extra keys replace ours; no fixed output, no sampling.
func TestExtraBodyOverrides(t *testing.T) {
	b, _ := New(client.Target{BaseURL: "http://x"}, APICompletions)
	req := &client.Request{Request: &workload.Request{Prompt: "p", OutputTokens: 8},
		Sampling: client.Sampling{ExtraBody: map[string]any{"max_tokens": 3, "stream_options": map[string]any{
			"include_usage": true, "continuous_usage_stats": true}}}}
	body, err := b.body(req)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"max_tokens":3,"prompt":"p","stream":true,"stream_options":{"continuous_usage_stats":true,"include_usage":true}}`
	if string(body) != want {
		t.Errorf("body = %s\nwant   %s", body, want)
	}
	req.Sampling.ExtraBody["bad"] = func() {}
	if _, err := b.body(req); err == nil {
		t.Error("unencodable ExtraBody: no error")
	}
}

// TestSessionKeyAsUser: a session's key goes as the body's "user" (a capture proxy reads it),
// not as a header unless one is named; the user's extra body wins.
func TestSessionKeyAsUser(t *testing.T) {
	b, _ := New(client.Target{BaseURL: "http://x"}, APIChat)
	req := &client.Request{Request: &workload.Request{Prompt: "p", OutputTokens: 8}, SessionKey: "0-3"}
	body, err := b.body(req)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"max_tokens":8,"messages":[{"content":"p","role":"user"}],"stream":true,"stream_options":{"include_usage":true},"user":"0-3"}`
	if string(body) != want {
		t.Errorf("body = %s\nwant   %s", body, want)
	}
	req.Sampling.ExtraBody = map[string]any{"user": "alice"}
	if body, _ = b.body(req); !strings.Contains(string(body), `"user":"alice"`) {
		t.Errorf("extra body's user lost: %s", body)
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		url, api string
		ok       bool
	}{
		{"http://h:1", APIChat, true},
		{"https://h/v1/", APICompletions, true},
		{"h:1", APIChat, false},
		{"http://", APIChat, false},
		{"http://a b", APIChat, false},
		{"http://h", "anthropic", false},
	} {
		if _, err := New(client.Target{BaseURL: tc.url}, tc.api); (err == nil) != tc.ok {
			t.Errorf("New(%q, %q) err = %v", tc.url, tc.api, err)
		}
	}
}
