package sim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The wire shapes of the faults that mimic a real server's way of ending or shaping a stream
// (abort, error_line, hidden_tokens, tool_calls), read field by field as the server sends them.

// wireChunk is a streamed chunk with every field the faults shape, pointers where absent and
// null must be told apart.
type wireChunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Index int     `json:"index"`
		Text  *string `json:"text"`
		Delta *struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       *string `json:"id"`
				Type     *string `json:"type"`
				Index    *int    `json:"index"`
				Function *struct {
					Name      *string `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string         `json:"finish_reason"`
		StopReason   json.RawMessage `json:"stop_reason"`
	} `json:"choices"`
	Usage *struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Total      int `json:"total_tokens"`
	} `json:"usage"`
}

// text is the chunk's generated text (completions text or chat delta.content), and whether it
// has the field at all.
func (c *wireChunk) text() (string, bool) {
	if len(c.Choices) == 0 {
		return "", false
	}
	ch := c.Choices[0]
	switch {
	case ch.Text != nil:
		return *ch.Text, true
	case ch.Delta != nil && ch.Delta.Content != nil:
		return *ch.Delta.Content, true
	}
	return "", false
}

func (c *wireChunk) finish() string {
	if len(c.Choices) == 0 || c.Choices[0].FinishReason == nil {
		return ""
	}
	return *c.Choices[0].FinishReason
}

// wireStream is one streamed response read whole.
type wireStream struct {
	resp   *http.Response
	events []sseEvent
	chunks []wireChunk // the JSON data events, in order (a nil Choices: usage-only)
	err    error
}

// streamWire sends body to path with the fault and reads the response whole, failing the test
// on a data payload that is not a chunk.
func streamWire(t *testing.T, base, path, fault string, body map[string]any) wireStream {
	t.Helper()
	var hdr []string
	if fault != "" {
		hdr = []string{"X-Sim-Fault", fault}
	}
	resp := post(t, base+path, body, hdr...)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: status %d", fault, path, resp.StatusCode)
	}
	s := wireStream{resp: resp}
	s.events, s.err = readSSE(resp.Body)
	s.events = foldFinish(s.events)
	for _, e := range s.events {
		if e.field != "data" || e.data == "[DONE]" {
			continue
		}
		var c wireChunk
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			t.Fatalf("%s %s: data %q is not a chunk: %v", fault, path, e.data, err)
		}
		s.chunks = append(s.chunks, c)
	}
	return s
}

// finishOnly matches a chunk that carries only a finish_reason (sim/stream.go appendFinish): the
// engine released the last token before it marked the sequence finished. Whether it comes is a
// matter of goroutine timing, as in vLLM; an abort chunk is not one.
var finishOnly = regexp.MustCompile(`(?:"delta":\{\}|"text":""),"logprobs":null,` +
	`"finish_reason":("[a-z_]+"(?:,"stop_reason":null)?)\}\]`)

// foldFinish moves a finish-only chunk's finish_reason into the content chunk before it and drops
// it, so that a test sees the same chunks whichever way the timing fell.
func foldFinish(events []sseEvent) []sseEvent {
	var out []sseEvent
	for _, e := range events {
		m := finishOnly.FindStringSubmatch(e.data)
		n := len(out)
		if e.field == "data" && m != nil && !strings.HasPrefix(m[1], `"abort"`) && n > 0 &&
			strings.Count(out[n-1].data, `"finish_reason":null`) == 1 {
			out[n-1].data = strings.Replace(out[n-1].data, `"finish_reason":null`, `"finish_reason":`+m[1], 1)
			continue
		}
		out = append(out, e)
	}
	return out
}

// contUsageBody is a streaming request of n tokens asking for usage on every chunk.
func contUsageBody(chat bool, n int) map[string]any {
	b := map[string]any{"max_tokens": n, "ignore_eos": true, "stream": true,
		"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}}
	if chat {
		b["messages"] = []map[string]any{{"role": "user", "content": "tell me"}}
	} else {
		b["prompt"] = "tell me"
	}
	return b
}

var apiPaths = []struct {
	name string
	path string
	chat bool
}{{"completions", "/v1/completions", false}, {"chat", "/v1/chat/completions", true}}

func TestFaultAbortWire(t *testing.T) {
	_, base := startSim(t, fixedConfig(5*time.Millisecond, 2*time.Millisecond))
	for _, api := range apiPaths {
		t.Run(api.name, func(t *testing.T) {
			s := streamWire(t, base, api.path, "abort", contUsageBody(api.chat, 10))
			if s.err != nil {
				t.Fatalf("read: %v", s.err)
			}
			// 5 content chunks (half the output), the abort chunk, the usage chunk, [DONE]
			if len(s.chunks) != 7 || len(s.events) != 8 || s.events[7].data != "[DONE]" {
				t.Fatalf("%d chunks, %d events (last %+v), want 5 content + abort + usage, then [DONE]", len(s.chunks), len(s.events), s.events[len(s.events)-1])
			}
			for i, c := range s.chunks[:5] {
				if txt, _ := c.text(); txt == "" || c.finish() != "" {
					t.Errorf("chunk %d: text %q finish %q, want text and a null finish_reason", i, txt, c.finish())
				}
			}
			ab := s.chunks[5]
			txt, has := ab.text()
			if !has || txt != "" || ab.finish() != "abort" || string(ab.Choices[0].StopReason) != "null" {
				t.Errorf("abort chunk %+v: want empty text, finish_reason \"abort\", stop_reason null", s.events[5].data)
			}
			if ab.Usage == nil || ab.Usage.Completion != 5 {
				t.Errorf("abort chunk usage %+v, want the 5 tokens sent (continuous usage)", ab.Usage)
			}
			if u := s.chunks[6]; len(u.Choices) != 0 || u.Usage == nil || u.Usage.Completion != 5 {
				t.Errorf("final chunk %s, want choices [] and completion_tokens 5", s.events[6].data)
			}
			wantObject := map[bool]string{false: "text_completion", true: "chat.completion.chunk"}[api.chat]
			if ab.Object != wantObject {
				t.Errorf("abort chunk object %q, want %q", ab.Object, wantObject)
			}
		})
	}
	t.Run("on the last token", func(t *testing.T) {
		// one token: the abort strikes after it, so that chunk must not finish the stream too
		s := streamWire(t, base, "/v1/completions", "abort", contUsageBody(false, 1))
		if len(s.chunks) != 3 || s.chunks[0].finish() != "" || s.chunks[1].finish() != "abort" {
			t.Fatalf("events %+v, want one content chunk with a null finish_reason, then the abort", s.events)
		}
	})
	t.Run("past the end", func(t *testing.T) {
		s := streamWire(t, base, "/v1/completions", "abort=20", contUsageBody(false, 10))
		for _, c := range s.chunks {
			if c.finish() == "abort" {
				t.Fatalf("abort=20 over 10 tokens aborted: %+v", s.events)
			}
		}
		if len(s.chunks) != 11 || s.chunks[9].finish() != "length" {
			t.Errorf("abort=20 over 10 tokens: %d chunks, want a normal stream of 10 and usage", len(s.chunks))
		}
	})
}

func TestFaultErrorLineWire(t *testing.T) {
	_, base := startSim(t, fixedConfig(5*time.Millisecond, 2*time.Millisecond))
	for _, api := range apiPaths {
		t.Run(api.name, func(t *testing.T) {
			s := streamWire(t, base, api.path, "error_line=3", contUsageBody(api.chat, 10))
			if s.err != nil {
				t.Fatalf("read: %v (the body should end cleanly)", s.err)
			}
			if len(s.events) != 5 || len(s.chunks) != 3 {
				t.Fatalf("events %+v: want 3 content chunks, the error line, [DONE]", s.events)
			}
			for i, c := range s.chunks {
				if txt, _ := c.text(); txt == "" || c.finish() != "" {
					t.Errorf("chunk %d: text %q finish %q", i, txt, c.finish())
				}
			}
			e := s.events[3]
			// llama.cpp's format_error_response, keys in nlohmann::json's (sorted) order
			if e.field != "error" || !strings.HasPrefix(e.data, `{"code":500,"message":"`) || !strings.HasSuffix(e.data, `","type":"server_error"}`) {
				t.Errorf("event 3: %s: %s, want the field error: with {\"code\":500,\"message\":…,\"type\":\"server_error\"}", e.field, e.data)
			}
			var body struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Type    string `json:"type"`
			}
			if err := json.Unmarshal([]byte(e.data), &body); err != nil || body.Code != 500 || body.Message == "" || body.Type != "server_error" {
				t.Errorf("error line %s: %+v (%v)", e.data, body, err)
			}
			if last := s.events[4]; last.field != "data" || last.data != "[DONE]" {
				t.Errorf("after the error line %+v, want data: [DONE] (llama.cpp's OpenAI routes)", last)
			}
			if !s.resp.Close { // net/http's client takes the Connection: close header into Close
				t.Error("no Connection: close: the server should close the connection after the stream")
			}
		})
	}
}

func TestFaultHiddenTokensWire(t *testing.T) {
	srv, base := startSim(t, fixedConfig(5*time.Millisecond, 2*time.Millisecond))
	var mu sync.Mutex
	truth := map[string][]TruthEvent{}
	srv.SetTruth(func(ev TruthEvent) {
		mu.Lock()
		truth[ev.RequestID] = append(truth[ev.RequestID], ev)
		mu.Unlock()
	})
	plain := streamWire(t, base, "/v1/completions", "", contUsageBody(false, 10))
	var plainText string
	for _, c := range plain.chunks {
		txt, _ := c.text()
		plainText += txt
	}
	for _, tc := range []struct {
		api    string
		fault  string
		hidden []int // completion_tokens of the text-free chunks
		carry  string
	}{
		{"completions", "hidden_tokens", []int{4, 8}, "1 1 1 2 1 1 2 1"},
		{"chat", "hidden_tokens", []int{4, 8}, "1 1 1 2 1 1 2 1"},
		{"completions", "hidden_tokens=3", []int{3, 6, 9}, "1 1 2 1 2 1 2"},
		{"completions", "hidden_tokens=10", nil, "1 1 1 1 1 1 1 1 1 1"}, // the last token is never hidden
	} {
		t.Run(tc.api+" "+tc.fault, func(t *testing.T) {
			chat := tc.api == "chat"
			s := streamWire(t, base, map[bool]string{false: "/v1/completions", true: "/v1/chat/completions"}[chat], tc.fault, contUsageBody(chat, 10))
			if s.err != nil || len(s.events) == 0 || s.events[len(s.events)-1].data != "[DONE]" {
				t.Fatalf("stream err %v, events %+v", s.err, s.events)
			}
			var hidden, carried []int
			text, prev := "", 0
			for i, c := range s.chunks {
				if len(c.Choices) == 0 {
					continue // the final usage chunk
				}
				txt, has := c.text()
				if !has || c.Usage == nil {
					t.Fatalf("chunk %d %s: want a text field and continuous usage", i, s.events[i].data)
				}
				if c.Usage.Completion != prev+1 {
					t.Errorf("chunk %d: completion_tokens %d after %d: every chunk is one token", i, c.Usage.Completion, prev)
				}
				prev = c.Usage.Completion
				if txt == "" {
					hidden = append(hidden, c.Usage.Completion)
					if c.finish() != "" {
						t.Errorf("text-free chunk %d finishes the stream", i)
					}
					continue
				}
				carried = append(carried, c.Usage.Completion)
				text += txt
			}
			if fmtInts(hidden) != fmtInts(tc.hidden) {
				t.Errorf("text-free chunks at completion_tokens %v, want %v", hidden, tc.hidden)
			}
			growth := make([]int, len(carried))
			for i, n := range carried {
				growth[i] = n
				if i > 0 {
					growth[i] -= carried[i-1]
				}
			}
			if fmtInts(growth) != tc.carry {
				t.Errorf("tokens per content event (usage growth) %v, want %s", growth, tc.carry)
			}
			if prev != 10 || countTokens(text) != 10 {
				t.Errorf("completion_tokens %d, text %q (%d tokens), want 10 and 10", prev, text, countTokens(text))
			}
			if !chat && text != plainText {
				t.Errorf("text %q, want the unfaulted stream's %q: held-back text must arrive later, not vanish", text, plainText)
			}
			// the truth: text-free chunks are kind "empty" with no tokens, and the content
			// events carry them, paired one to one with the client's content events
			var evs []TruthEvent
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
				mu.Lock() // the hook runs after each flush: wait for the stream's last event
				evs = slices.Clone(truth[s.resp.Header.Get("X-Request-Id")])
				mu.Unlock()
				if len(evs) > 0 && evs[len(evs)-1].Kind == "done" || time.Now().After(deadline) {
					break
				}
			}
			var tokens []int
			empty := 0
			for _, ev := range evs {
				switch ev.Kind {
				case "content":
					tokens = append(tokens, ev.Tokens)
				case "empty":
					empty++
					if ev.Tokens != 0 {
						t.Errorf("truth: empty event with %d tokens", ev.Tokens)
					}
				}
			}
			if fmtInts(tokens) != tc.carry || empty != len(tc.hidden) {
				t.Errorf("truth content tokens %v and %d empty events, want %s and %d", tokens, empty, tc.carry, len(tc.hidden))
			}
		})
	}
	t.Run("without continuous usage", func(t *testing.T) {
		s := streamWire(t, base, "/v1/completions", "hidden_tokens", completion("tell me", 10))
		empty := 0
		for _, c := range s.chunks {
			if txt, has := c.text(); has && txt == "" {
				empty++
				if c.Usage != nil {
					t.Errorf("text-free chunk carries usage %+v without continuous_usage_stats", c.Usage)
				}
			}
		}
		if empty != 2 {
			t.Errorf("%d text-free chunks, want 2", empty)
		}
	})
}

var toolIDRE = regexp.MustCompile(`^chatcmpl-tool-[0-9a-f]{32}$`)

func TestFaultToolCallsWire(t *testing.T) {
	_, base := startSim(t, fixedConfig(5*time.Millisecond, 2*time.Millisecond))
	s := streamWire(t, base, "/v1/chat/completions", "tool_calls", contUsageBody(true, 10))
	if s.err != nil || s.events[len(s.events)-1].data != "[DONE]" {
		t.Fatalf("stream err %v, events %+v", s.err, s.events)
	}
	if len(s.chunks) != 11 {
		t.Fatalf("%d chunks, want 10 tool-call chunks and the usage chunk", len(s.chunks))
	}
	var args string
	for i, c := range s.chunks[:10] {
		ch := c.Choices[0]
		if ch.Delta == nil || ch.Delta.Content != nil || len(ch.Delta.ToolCalls) != 1 {
			t.Fatalf("chunk %d %s: want a delta with one tool call and no content", i, s.events[i].data)
		}
		tc := ch.Delta.ToolCalls[0]
		if tc.Index == nil || *tc.Index != 0 || tc.Function == nil {
			t.Fatalf("chunk %d %s: want index 0 and a function", i, s.events[i].data)
		}
		if i == 0 {
			if tc.ID == nil || !toolIDRE.MatchString(*tc.ID) || tc.Type == nil || *tc.Type != "function" ||
				tc.Function.Name == nil || *tc.Function.Name == "" || tc.Function.Arguments != nil {
				t.Errorf("first chunk %s: want vLLM's opening delta (id chatcmpl-tool-<32 hex>, type function, the name, no arguments yet)", s.events[i].data)
			}
		} else {
			if tc.ID != nil || tc.Type != nil || tc.Function.Name != nil || tc.Function.Arguments == nil || *tc.Function.Arguments == "" {
				t.Errorf("chunk %d %s: want only index and a piece of the arguments", i, s.events[i].data)
			} else {
				args += *tc.Function.Arguments
			}
		}
		wantFinish := map[bool]string{false: "", true: "tool_calls"}[i == 9]
		if c.finish() != wantFinish || c.Usage == nil || c.Usage.Completion != i+1 {
			t.Errorf("chunk %d: finish %q, usage %+v; want %q and completion_tokens %d", i, c.finish(), c.Usage, wantFinish, i+1)
		}
	}
	if string(s.chunks[9].Choices[0].StopReason) != "null" {
		t.Errorf("finish chunk %s: want stop_reason null, as vLLM sends", s.events[9].data)
	}
	var call struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal([]byte(args), &call); err != nil || countTokens(call.Query) != 9 {
		t.Errorf("arguments %q (%v): want a JSON object whose query has the 9 words after the name's token", args, err)
	}
	if u := s.chunks[10]; len(u.Choices) != 0 || u.Usage == nil || u.Usage.Completion != 10 {
		t.Errorf("usage chunk %s, want 10 completion tokens", s.events[10].data)
	}

	t.Run("one token", func(t *testing.T) {
		s := streamWire(t, base, "/v1/chat/completions", "tool_calls", contUsageBody(true, 1))
		if len(s.chunks) != 2 {
			t.Fatalf("events %+v", s.events)
		}
		tc := s.chunks[0].Choices[0].Delta.ToolCalls
		if len(tc) != 1 || tc[0].ID == nil || tc[0].Function.Name == nil || tc[0].Function.Arguments == nil || *tc[0].Function.Arguments != "{}" ||
			s.chunks[0].finish() != "tool_calls" {
			t.Errorf("one-token call %s: want the whole call (id, name, arguments {}) with finish_reason tool_calls", s.events[0].data)
		}
	})

	t.Run("completions unchanged", func(t *testing.T) {
		plain := streamWire(t, base, "/v1/completions", "", contUsageBody(false, 10))
		faulted := streamWire(t, base, "/v1/completions", "tool_calls", contUsageBody(false, 10))
		strip := func(s wireStream) (out []string) {
			for _, e := range s.events {
				// the request id differs between the two requests
				out = append(out, regexp.MustCompile(`cmpl-sim-\d+`).ReplaceAllString(e.field+": "+e.data, "ID"))
			}
			return out
		}
		if a, b := strings.Join(strip(plain), "\n"), strings.Join(strip(faulted), "\n"); a != b {
			t.Errorf("tool_calls changed a /v1/completions stream:\n%s\nwant\n%s", b, a)
		}
	})
}

func TestFaultNewKindsParse(t *testing.T) {
	for spec, want := range map[string]string{
		"abort": "abort", "abort=2": "abort=2", "error_line": "error_line", "error_line=1": "error_line=1",
		"hidden_tokens": "hidden_tokens=4", "hidden_tokens=2": "hidden_tokens=2", "tool_calls": "tool_calls",
	} {
		f, err := ParseFault(spec)
		if err != nil || f.String() != want {
			t.Errorf("ParseFault(%q) = %v, %v; want %s", spec, f, err, want)
		}
	}
	for _, bad := range []string{"hidden_tokens=1", "hidden_tokens=0", "abort=x", "error_line=-1", "tool_calls=3"} {
		if _, err := ParseFault(bad); err == nil {
			t.Errorf("ParseFault(%q) accepted", bad)
		}
	}
	var l FaultList
	for _, s := range []string{"abort=0.1", "error_line:2=0.1", "hidden_tokens:3=0.1", "tool_calls=0.1"} {
		if err := l.Set(s); err != nil {
			t.Fatalf("--fault %s: %v", s, err)
		}
	}
	if got := l.String(); got != "abort=0.1,error_line:2=0.1,hidden_tokens:3=0.1,tool_calls=0.1" {
		t.Errorf("String() = %q", got)
	}
	// --fault-rate draws every kind, the new ones included
	d := &faultDrawer{seed: 3, rate: 1}
	seen := map[string]bool{}
	for range 4000 {
		f, ok := d.draw()
		if !ok {
			t.Fatal("rate 1 drew no fault")
		}
		seen[f.Kind] = true
		if f.Kind == FaultHiddenTokens && f.Count != 4 {
			t.Errorf("drawn hidden_tokens without its default period: %v", f)
		}
	}
	for _, k := range []string{FaultAbort, FaultErrorLine, FaultHiddenTokens, FaultToolCalls} {
		if !seen[k] {
			t.Errorf("--fault-rate never drew %s in 4000 requests", k)
		}
	}
}

func TestFoldFinish(t *testing.T) {
	head := `{"id":"cmpl-sim-1","object":"text_completion","created":1,"model":"m",`
	usage := `,"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2}}`
	content := head + `"choices":[{"index":0,"text":" b","logprobs":null,"finish_reason":null}]` + usage
	finish := head + `"choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length"}]` + usage
	abort := head + `"choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"abort","stop_reason":null}]}`
	chat := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]},"logprobs":null,"finish_reason":null}]}`
	chatFin := `{"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls","stop_reason":null}]}`
	ev := func(d ...string) (out []sseEvent) {
		for _, s := range d {
			out = append(out, sseEvent{field: "data", data: s})
		}
		return out
	}
	got := foldFinish(ev(content, finish, "[DONE]"))
	want := strings.Replace(content, `"finish_reason":null`, `"finish_reason":"length"`, 1)
	if len(got) != 2 || got[0].data != want {
		t.Errorf("completions: got %+v, want the finish folded into %s", got, want)
	}
	if got := foldFinish(ev(content, abort)); len(got) != 2 {
		t.Errorf("an abort chunk was folded: %+v", got)
	}
	got = foldFinish(ev(chat, chatFin))
	if len(got) != 1 || !strings.Contains(got[0].data, `"finish_reason":"tool_calls","stop_reason":null}]`) {
		t.Errorf("chat: got %+v", got)
	}
	if got := foldFinish(ev(finish)); len(got) != 1 {
		t.Errorf("a finish chunk with no chunk before it was dropped: %+v", got)
	}
}
