package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"servebench/sim"
	"servebench/sim/simtest"
)

// buffer is a Flusher over memory.
type buffer struct{ bytes.Buffer }

func (*buffer) Flush() error { return nil }

// TestRecorderOrder: requests finish out of order but are written in arrival order, a
// skipped one leaves no line, and block ids are numbered as they first appear in the file.
func TestRecorderOrder(t *testing.T) {
	var b buffer
	r := NewRecorder(&b)
	s0, a0 := r.Arrive()
	s1, _ := r.Arrive()
	s2, a2 := r.Arrive()
	r.finish(s2, a2, a2+time.Millisecond, &entry{hashes: []uint64{7, 9}, line: Line{InputLength: 3, OutputLength: 1}})
	if b.Len() != 0 {
		t.Fatalf("a line was written before the requests that arrived before it finished: %q", b.String())
	}
	r.Skip(s1, "answered 500")
	r.finish(s0, a0, a0+5*time.Millisecond, &entry{hashes: []uint64{9}, line: Line{InputLength: 2, OutputLength: 1}})
	want := `{"timestamp":0,"input_length":2,"output_length":1,"hash_ids":[0],"api":"","end_timestamp":5}` + "\n"
	if got := strings.SplitAfter(b.String(), "\n"); len(got) != 3 || got[0] != want || !strings.Contains(got[1], `"hash_ids":[1,0]`) {
		t.Fatalf("lines:\n%s\nwant 2, the first %s and the second with hash ids [1,0]", b.String(), want)
	}
	if r.Lines != 2 || r.Skipped["answered 500"] != 1 || r.Pending() != 0 {
		t.Errorf("lines %d, skipped %v, pending %d", r.Lines, r.Skipped, r.Pending())
	}
}

// TestBlockHashes: prompts that begin alike share the hashes of the blocks they share whole,
// and nothing after the first block that differs.
func TestBlockHashes(t *testing.T) {
	a := blockHashes([]int{1, 2, 3, 4, 5, 6, 7}, 2)
	b := blockHashes([]int{1, 2, 3, 4, 9, 6, 7}, 2)
	if len(a) != 4 || a[0] != b[0] || a[1] != b[1] || a[2] == b[2] || a[3] == b[3] {
		t.Errorf("hashes %v and %v: want 4 each, the first two shared, the rest not", a, b)
	}
}

// TestParse: the prompt, session key and counts of each API's shapes.
func TestParse(t *testing.T) {
	p, ok := parsePrompt([]byte(`{"model":"m","messages":[{"role":"system","content":"be brief"},
		{"role":"user","content":[{"type":"text","text":"hi"}]}],"user":"u1","metadata":{"session_id":"s9"}}`))
	if !ok || p.text != "be brief\nhi\n" || p.session != "s9" || p.messages == nil {
		t.Errorf("chat: %+v", p)
	}
	p, _ = parsePrompt([]byte(`{"prompt":[1,2,3]}`))
	if len(p.ids) != 3 {
		t.Errorf("token-id prompt: %+v", p)
	}
	// Ollama's OpenAI API: zero-filled usage on every chunk, the real one last
	u := parseAnswer([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a b\"}}],\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":0}}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\ndata: [DONE]\n\n"))
	if *u.input != 12 || *u.output != 2 || *u.cached != 8 || u.text.String() != "a b" {
		t.Errorf("OpenAI stream: in %v out %v cached %v text %q", *u.input, *u.output, *u.cached, u.text.String())
	}
	// Anthropic: input at message_start, output in message_delta
	u = parseAnswer([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n" +
		"data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":3}}\n\n"))
	if *u.input != 5 || *u.output != 3 || u.text.String() != "x" {
		t.Errorf("Anthropic stream: in %v out %v text %q", *u.input, *u.output, u.text.String())
	}
	// llama.cpp's native answer, pretty-printed
	u = parseAnswer([]byte("{\n \"content\": \"zz\",\n \"tokens_evaluated\": 4,\n \"tokens_predicted\": 1\n}"))
	if *u.input != 4 || *u.output != 1 {
		t.Errorf("llama.cpp: in %v out %v", *u.input, *u.output)
	}
}

// TestProxyStreams: through the proxy, a stream's first event reaches the client while the
// server is still generating (flushed per event, not buffered), status and headers pass
// through, an error is not recorded, and the request is recorded with the server's counts.
func TestProxyStreams(t *testing.T) {
	c := sim.DefaultConfig()
	c.TTFT, c.ITL = time.Millisecond, 40*time.Millisecond
	_, up := simtest.Start(t, c)
	u, _ := url.Parse(up)
	var out buffer
	var logs bytes.Buffer
	rec := NewRecorder(&out)
	p, err := New(Config{Upstream: u, BlockTokens: 4, Log: &logs}, rec)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	defer front.Close()

	body := `{"model":"meta-llama/Llama-3.1-8B-Instruct","prompt":"the cat sat on the mat","max_tokens":6,"stream":true,"stream_options":{"include_usage":true},"session_id":"abc"}`
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/v1/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer sekrit")
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	var first, last time.Duration
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: {") {
			if first == 0 {
				first = time.Since(t0)
			}
			last = time.Since(t0)
		}
	}
	resp.Body.Close()
	// six tokens 40 ms apart: a buffering proxy would deliver the first with the last
	if last-first < 100*time.Millisecond {
		t.Errorf("first event at %v, last at %v: the stream was buffered", first, last)
	}
	bad, _ := http.Post(front.URL+"/v1/completions", "application/json", strings.NewReader(`{"model":"nope","prompt":"x"}`))
	if bad.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown model through the proxy: status %d, want the server's 404", bad.StatusCode)
	}
	bad.Body.Close()
	front.Close()
	p.Wait()
	var l Line
	if err := json.Unmarshal(out.Bytes(), &l); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if l.InputLength != 6 || l.OutputLength < 1 || l.OutputLength > 6 || len(l.HashIDs) != 2 || l.SessionID == "" || l.SessionID == "abc" || l.API != "openai-completions" {
		t.Errorf("line %+v: want 6 tokens in, 1 to 6 out, 2 blocks of 4, the session key hashed", l)
	}
	if rec.Skipped["answered 404"] != 1 || strings.Contains(logs.String(), "sekrit") {
		t.Errorf("skipped %v; log %q", rec.Skipped, logs.String())
	}
}
