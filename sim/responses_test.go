package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// respEvent is the decoded shape of a streamed Responses API event.
type respEvent struct {
	Type     string `json:"type"`
	Seq      *int   `json:"sequence_number"`
	Delta    string `json:"delta"`
	Message  string `json:"message"`
	Response *struct {
		Status string `json:"status"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
		Output []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Usage *struct {
			Input   int `json:"input_tokens"`
			Output  int `json:"output_tokens"`
			Total   int `json:"total_tokens"`
			Details struct {
				Cached *int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	} `json:"response"`
}

// readResponses reads a Responses stream: its events (every data line must be JSON), and
// the read error that ended it.
func readResponses(t *testing.T, resp *http.Response) ([]respEvent, error) {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d %s: %s", resp.StatusCode, ct, b)
	}
	raw, err := readSSE(resp.Body)
	var evs []respEvent
	for _, e := range raw {
		if e.comment {
			continue
		}
		var ev respEvent
		if json.Unmarshal([]byte(e.data), &ev) != nil {
			ev.Type = "malformed"
		}
		evs = append(evs, ev)
	}
	return evs, err
}

func responsesBody(n int, stream bool) map[string]any {
	return map[string]any{"input": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": words(9)}}}},
		"instructions": "Be brief.", "max_output_tokens": n, "ignore_eos": true, "stream": stream, "store": false}
}

// TestResponsesStream: vLLM's event sequence with contiguous sequence numbers, one delta per
// token, and the same text and token counts as the chat route gives the same conversation
// (instructions as a system message, input parts as the user message), which is what makes
// the two APIs' figures comparable.
func TestResponsesStream(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, fixedConfig(5*time.Millisecond, time.Millisecond))
	evs, err := readResponses(t, post(t, base+"/v1/responses", responsesBody(6, true)))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	text := ""
	for i, ev := range evs {
		types = append(types, ev.Type)
		if ev.Seq == nil || *ev.Seq != i {
			t.Errorf("event %d (%s): sequence_number %v", i, ev.Type, ev.Seq)
		}
		text += ev.Delta
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added " +
		strings.Repeat("response.output_text.delta ", 6) +
		"response.output_text.done response.content_part.done response.output_item.done response.completed"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	last := evs[len(evs)-1].Response
	if last.Status != "completed" || last.Usage == nil || last.Usage.Output != 6 || last.Usage.Total != last.Usage.Input+6 ||
		len(last.Output) != 1 || last.Output[0].Content[0].Text != text {
		t.Fatalf("completed %+v, deltas %q", last, text)
	}
	chat := map[string]any{"messages": []any{map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": words(9)}},
		"max_tokens": 6, "ignore_eos": true, "stream": true, "stream_options": map[string]any{"include_usage": true}}
	raw, _ := readSSE(post(t, base+"/v1/chat/completions", chat).Body)
	d := decode(t, raw)
	u := d.chunks[len(d.chunks)-1].Usage
	if d.text != text || u == nil || u.Prompt != last.Usage.Input {
		t.Errorf("chat: %q, usage %+v; responses: %q, input_tokens %d", d.text, u, text, last.Usage.Input)
	}
}

// TestResponsesNotStreamed: the whole response object, as the stream's response.completed.
func TestResponsesNotStreamed(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, fixedConfig(time.Millisecond, time.Millisecond))
	resp := post(t, base+"/v1/responses", map[string]any{"input": "Hello there", "max_output_tokens": 3, "ignore_eos": true})
	defer resp.Body.Close()
	var r struct {
		Object, Status string
		Usage          struct {
			Output int `json:"output_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 || r.Object != "response" || r.Status != "completed" || r.Usage.Output != 3 {
		t.Errorf("%d %+v %v", resp.StatusCode, r, err)
	}
}

// TestResponsesBadRequests: a 4xx with the reason, in the chat route's error shape.
func TestResponsesBadRequests(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, fixedConfig(time.Millisecond, time.Millisecond))
	for _, tc := range []struct {
		body   any
		status int
		msg    string
	}{
		{map[string]any{"stream": true}, 400, "input is required"},
		{map[string]any{"input": []any{}}, 400, "input must not be empty"},
		{map[string]any{"input": 5}, 400, "input must be a string or a list"},
		{map[string]any{"input": "x", "max_output_tokens": 0}, 400, "max_output_tokens must be at least 1"},
		{map[string]any{"input": []any{map[string]any{"type": "function_call_output", "output": "x"}}}, 400, "message items only"},
		{map[string]any{"input": "x", "model": "nope"}, 404, "does not exist"},
		{map[string]any{"input": "x", "max_output_tokens": 1 << 30}, 400, "maximum context length"},
	} {
		resp := post(t, base+"/v1/responses", tc.body)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.msg) {
			t.Errorf("%v: %d %s, want %d with %q", tc.body, resp.StatusCode, b, tc.status, tc.msg)
		}
	}
}

// TestResponsesFaults: the mid-stream faults in the Responses API's own shapes.
func TestResponsesFaults(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	s, base := startSim(t, fixedConfig(time.Millisecond, time.Millisecond))
	var mu sync.Mutex
	kinds := map[string]int{}
	s.SetTruth(func(ev TruthEvent) {
		mu.Lock()
		kinds[ev.Kind]++
		mu.Unlock()
	})
	last := func(fault string) (respEvent, int, error) {
		evs, err := readResponses(t, post(t, base+"/v1/responses", responsesBody(6, true), "X-Sim-Fault", fault))
		deltas := 0
		for _, ev := range evs {
			if ev.Type == "response.output_text.delta" {
				deltas++
			}
		}
		if len(evs) == 0 {
			return respEvent{}, 0, err
		}
		return evs[len(evs)-1], deltas, err
	}
	if ev, n, _ := last("error_event=2"); ev.Type != "error" || !strings.Contains(ev.Message, "simulated engine error") || n != 2 {
		t.Errorf("error_event: last %+v after %d deltas", ev, n)
	}
	if ev, n, _ := last("abort=3"); ev.Type != "response.failed" || ev.Response == nil || ev.Response.Error == nil ||
		!strings.Contains(ev.Response.Error.Message, "simulated abort") || n != 3 {
		t.Errorf("abort: last %+v after %d deltas", ev, n)
	}
	if ev, n, _ := last("no_done"); ev.Type != "response.output_item.done" || n != 6 {
		t.Errorf("no_done: last %s after %d deltas", ev.Type, n)
	}
	if ev, n, err := last("disconnect=2"); err == nil || ev.Type != "response.output_text.delta" || n != 2 {
		t.Errorf("disconnect: last %s after %d deltas, err %v", ev.Type, n, err)
	}
	if _, n, _ := last("multi_token=3"); n != 2 {
		t.Errorf("multi_token=3: %d deltas for 6 tokens", n)
	}
	evs, _ := readResponses(t, post(t, base+"/v1/responses", responsesBody(4, true), "X-Sim-Fault", "malformed_json=1"))
	bad := 0
	for _, ev := range evs {
		if ev.Type == "malformed" {
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("malformed_json: %d malformed events", bad)
	}
	mu.Lock()
	defer mu.Unlock()
	if kinds["error"] != 1 || kinds["abort"] != 1 || kinds["malformed"] != 1 || kinds["content"] == 0 || kinds["lifecycle"] == 0 {
		t.Errorf("truth kinds %v", kinds)
	}
}
