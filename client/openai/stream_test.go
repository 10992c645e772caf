package openai

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/client/sse"
	"servebench/record"
)

// nopObserver discards every call, for fuzzing and benchmarks.
type nopObserver struct{}

func (nopObserver) Dispatched()            {}
func (nopObserver) ConnectStart()          {}
func (nopObserver) ConnectDone()           {}
func (nopObserver) WroteRequest()          {}
func (nopObserver) Headers(int)            {}
func (nopObserver) EventRead()             {}
func (nopObserver) Choice()                {}
func (nopObserver) Content(int)            {}
func (nopObserver) Usage(int, int)         {}
func (nopObserver) Server(string, float64) {}
func (nopObserver) Done()                  {}

// TestDecoderReuse: fields of one event must not leak into the next through reused storage.
func TestDecoderReuse(t *testing.T) {
	var d decoder
	rec := &recorder{}
	for _, ev := range []string{
		`{"choices":[{"text":"a","finish_reason":null},{"text":"b"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		`{"choices":[{"finish_reason":null}]}`, // no text: element 0 must not keep "a"
		`{"choices":[]}`,
		`{"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0},"error":null}`,
	} {
		rec.EventRead()
		if err := d.event([]byte(ev), rec); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"event choice content 2 usage 1/2", "event choice", "event ×2"}
	if got := rec.events(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
	if d.finished {
		t.Error("finished without a finish_reason")
	}
}

// FuzzDecodeEvent: any payload is decoded or rejected as a classified error, never a panic.
// json.Unmarshal is the oracle for what is valid, and a decoder that has seen an event (or an
// error) must treat the next one exactly as a fresh decoder does.
func FuzzDecodeEvent(f *testing.F) {
	files, _ := filepath.Glob("../testdata/*.sse")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		r := sse.NewReader(strings.NewReader(string(b)))
		for {
			data, err := r.Next()
			if err != nil {
				break
			}
			f.Add(append([]byte(nil), data...))
		}
	}
	f.Add([]byte(`{"choices":[{"delta":{"content":1}}],"timings":[1]}`))
	f.Add([]byte(`{"timings":{"a":"x","b":1e308}} `))
	f.Add([]byte(`{"choices":[]}{"x":1}`))
	f.Add([]byte(`{"choices":[{"delta":{"tool_calls":[ ]},"finish_reason":"abort"}],"usage":{"completion_tokens":-1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d decoder
		first, err := decodeOnce(&d, data)
		var ref chunk
		refErr := json.Unmarshal(data, &ref)
		if refErr == nil {
			if msg := ref.Usage.check(); msg != "" {
				refErr = errors.New(msg) // a count out of range is a decode error too
			}
		}
		switch {
		case refErr != nil && (err == nil || err.Class != record.ErrDecode):
			t.Fatalf("%q: json.Unmarshal fails (%v) but decoder says %v", data, refErr, err)
		case refErr == nil && err != nil && err.Class != record.ErrStreamErrorEvent:
			t.Fatalf("%q: valid chunk rejected: %v", data, err)
		}
		again, err2 := decodeOnce(&d, data)
		if first != again || (err == nil) != (err2 == nil) {
			t.Fatalf("%q: reused decoder: %q, %v; fresh: %q, %v", data, again, err2, first, err)
		}
		if _, err := decodeOnce(&d, []byte(`{"choices":[{"text":"x"}]}`)); err != nil {
			t.Fatalf("after %q, a valid event fails: %v", data, err)
		}
	})
}

var contentCount = regexp.MustCompile(`content \d+`)

// decodeOnce decodes one event and returns the calls it made, token counts left out (they
// depend on the previous usage).
func decodeOnce(d *decoder, data []byte) (string, *client.Error) {
	rec := &recorder{}
	err := d.event(data, rec)
	return contentCount.ReplaceAllString(strings.Join(rec.calls, " "), "content"), err
}

var benchEvents = map[string]string{
	"vllm-chat-usage": `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",` +
		`"choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],` +
		`"usage":{"prompt_tokens":100,"total_tokens":117,"completion_tokens":17}}`,
	"llamacpp-completions": `{"choices":[{"text":" their","index":0,"logprobs":null,"finish_reason":null}],` +
		`"created":1796214453,"model":"tiny.gguf","system_fingerprint":"b11669-Debian","object":"text_completion",` +
		`"id":"chatcmpl-Hyn37ryhhnUsgHi3FKlRExcR2cIT38q4"}`,
}

// BenchmarkDecodeEvent measures decoding one typical event (ns/op = ns/event).
func BenchmarkDecodeEvent(b *testing.B) {
	for name, ev := range benchEvents {
		b.Run(name, func(b *testing.B) {
			var d decoder
			data := []byte(ev)
			var o client.Observer = nopObserver{}
			b.ReportAllocs()
			for b.Loop() {
				if err := d.event(data, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// repeat serves the same bytes forever, as a long stream would.
type repeat struct {
	b   []byte
	off int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := copy(p, r.b[r.off:])
	r.off = (r.off + n) % len(r.b)
	return n, nil
}

// BenchmarkEventPath is the whole per-event client cost: read the event, stamp it through
// Serial, decode it, report it (ns/op = ns per event).
func BenchmarkEventPath(b *testing.B) {
	ev := "data: " + benchEvents["vllm-chat-usage"] + "\n\n"
	r := sse.NewReader(&repeat{b: []byte(strings.Repeat(ev, 64))})
	o := client.NewSerial(nopObserver{})
	var d decoder
	b.ReportAllocs()
	for b.Loop() {
		data, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		o.EventRead()
		if err := d.event(data, o); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCachedPromptTokensReported checks that usage.prompt_tokens_details.cached_tokens (vLLM
// with prefix caching, llama.cpp) reaches the observer as the server figure
// usage.cached_tokens, so that a run served from the prefix cache is flagged.
func TestCachedPromptTokensReported(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"text\":\" a\",\"finish_reason\":\"length\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":64,\"completion_tokens\":1,\"total_tokens\":65,\"prompt_tokens_details\":{\"cached_tokens\":48}}}\n\n" +
		"data: [DONE]\n\n"
	srv := newServer(t, clienttest.Stream{Body: body})
	rec, err := run(t, srv.target(), APICompletions, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rec.calls, " "), "usage 64/1 usage.cached_tokens=48") {
		t.Errorf("calls %v", rec.calls)
	}
}

// TestUsageNotACount: a token count that is negative, fractional, a string, not JSON at all
// or absurdly large is a malformed answer (class decode, naming the field), never a success
// whose nonsense count enters the throughput.
func TestUsageNotACount(t *testing.T) {
	for _, tc := range []struct{ value, field string }{
		{"-100", "usage.completion_tokens = -100"},
		{"1e23", "usage.completion_tokens"},
		{`"12"`, "usage.completion_tokens"},
		{"12.5", "usage.completion_tokens"},
		{"NaN", "invalid character"},
		{"2000000000", "usage.completion_tokens = 2000000000"},
		{"99999999999999999999", "usage.completion_tokens"},
	} {
		body := "data: {\"choices\":[{\"index\":0,\"text\":\" a\",\"finish_reason\":\"length\"}]}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":" + tc.value + ",\"total_tokens\":4}}\n\n" +
			"data: [DONE]\n\n"
		srv := newServer(t, clienttest.Stream{Body: body})
		rec, err := run(t, srv.target(), APICompletions, 0)
		want := append(append([]string{}, start...), "event choice content 0", "event")
		t.Run(tc.value, func(t *testing.T) { checkRun(t, rec, err, want, record.ErrDecode, tc.field) })
	}
	for _, field := range []string{"prompt_tokens", "total_tokens"} {
		var d decoder
		err := d.event([]byte(`{"choices":[],"usage":{"`+field+`":-1}}`), nopObserver{})
		if err == nil || err.Class != record.ErrDecode || !strings.Contains(err.Msg, "usage."+field+" = -1") {
			t.Errorf("%s = -1: %v", field, err)
		}
	}
	var d decoder
	err := d.event([]byte(`{"choices":[],"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":-3}}}`), nopObserver{})
	if err == nil || !strings.Contains(err.Msg, "usage.prompt_tokens_details.cached_tokens = -3") {
		t.Errorf("cached_tokens = -3: %v", err)
	}
}
