package sse

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// event is one dispatched event, for comparisons.
type event struct{ typ, data string }

// readAll drains r and returns its events and the final error.
func readAll(r *Reader) ([]event, error) {
	var evs []event
	for {
		data, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, event{string(r.Type()), string(data)})
	}
}

func TestReader(t *testing.T) {
	big := strings.Repeat("x", 200<<10) // larger than the 64 KiB buffer
	tests := []struct {
		name string
		in   string
		want []event
		err  error
	}{
		{"lf", "data: a\n\ndata: b\n\n", []event{{"", "a"}, {"", "b"}}, io.EOF},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []event{{"", "a"}, {"", "b"}}, io.EOF},
		{"no space", "data:a\n\ndata:  two\n\n", []event{{"", "a"}, {"", " two"}}, io.EOF},
		{"multi-line", "data: {\"a\":\ndata: 1}\n\n", []event{{"", "{\"a\":\n1}"}}, io.EOF},
		{"comments", ": ping\n\n: keep-alive\ndata: a\n: mid\n\n:\n\n", []event{{"", "a"}}, io.EOF},
		{"done", "data: x\n\ndata: [DONE]\n\n", []event{{"", "x"}, {"", "[DONE]"}}, io.EOF},
		{"event type", "event: error\ndata: {\"m\":1}\n\ndata: b\n\n", []event{{"error", "{\"m\":1}"}, {"", "b"}}, io.EOF},
		{"type without data", "event: ping\n\ndata: b\n\n", []event{{"", "b"}}, io.EOF},
		{"id and retry ignored", "id: 7\nretry: 10\ndata: a\n\n", []event{{"", "a"}}, io.EOF},
		{"empty data", "data:\n\n", []event{{"", ""}}, io.EOF},
		{"field without colon", "data\n\n", []event{{"", ""}}, io.EOF},
		{"unknown field", "foo: bar\ndata: a\n\n", []event{{"", "a"}}, io.EOF},
		{"unknown field only", "foo: bar\n\ndata: a\n\n", []event{{"", "a"}}, io.EOF},
		// llama.cpp's mid-stream failure (server_sent_event(sink, "error", ...))
		{"error field", "data: a\n\nerror: {\"code\":500,\"message\":\"boom\"}\n\n", []event{{"", "a"}, {"error", `{"code":500,"message":"boom"}`}}, io.EOF},
		{"error field wins over event", "error: x\nevent: message\n\ndata: b\n\n", []event{{"error", "x"}, {"", "b"}}, io.EOF},
		{"error field not sticky", "event: e\nerror: x\n\nevent: f\ndata: y\n\n", []event{{"error", "x"}, {"f", "y"}}, io.EOF},
		{"error field at eof", "error: {\"message\":\"m\"}\n", []event{{"error", `{"message":"m"}`}}, io.EOF},
		{"errors field ignored", "errors: x\nerror_: y\ndata: a\n\n", []event{{"", "a"}}, io.EOF},
		{"bom", "\xEF\xBB\xBFdata: a\n\n", []event{{"", "a"}}, io.EOF},
		{"big", "data: " + big + "\n\ndata: b\n\n", []event{{"", big}, {"", "b"}}, io.EOF},
		{"big crlf", "data: " + big + "\r\n\r\n", []event{{"", big}}, io.EOF},
		{"no final blank line", "data: a\n\ndata: b\n", []event{{"", "a"}, {"", "b"}}, io.EOF},
		{"cut mid line", "data: a\n\ndata: {\"x\"", []event{{"", "a"}}, io.ErrUnexpectedEOF},
		{"cut mid event", "data: a\n\ndata: b\ndata: c", []event{{"", "a"}}, io.ErrUnexpectedEOF},
		{"empty", "", nil, io.EOF},
		{"blank lines only", "\n\r\n\n", nil, io.EOF},
	}
	for _, tt := range tests {
		for _, mode := range []string{"whole", "onebyte", "halfreader"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				var src io.Reader = strings.NewReader(tt.in)
				switch mode {
				case "onebyte":
					src = iotest.OneByteReader(src)
				case "halfreader":
					src = iotest.HalfReader(src)
				}
				got, err := readAll(NewReaderSize(src, 16))
				if err != tt.err {
					t.Fatalf("final error = %v, want %v", err, tt.err)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("got %d events, want %d: %.200q", len(got), len(tt.want), got)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("event %d = %.80q, want %.80q", i, got[i], tt.want[i])
					}
				}
			})
		}
	}
}

func TestReaderStickyError(t *testing.T) {
	r := NewReader(strings.NewReader("data: a\n\n"))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("err = %v, want io.EOF", err)
		}
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	src := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom))
	got, err := readAll(NewReader(src))
	if err != boom || len(got) != 1 {
		t.Fatalf("got %q, %v; want one event then boom", got, err)
	}
}

func TestReaderMaxEventSize(t *testing.T) {
	for _, in := range []string{
		"data: " + strings.Repeat("x", 100) + "\n\n",             // one long line
		strings.Repeat("data: "+strings.Repeat("x", 30)+"\n", 5), // many short lines
	} {
		r := NewReaderSize(strings.NewReader(in), 16)
		r.MaxEventSize = 64
		if _, err := r.Next(); err != ErrEventTooLarge {
			t.Errorf("err = %v, want ErrEventTooLarge", err)
		}
	}
}

func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader("data: a\n\ndata: cut"))
	if _, err := readAll(r); err != io.ErrUnexpectedEOF {
		t.Fatalf("err = %v", err)
	}
	r.Reset(strings.NewReader("event: x\ndata: b\n\n"))
	got, err := readAll(r)
	if err != io.EOF || len(got) != 1 || got[0] != (event{"x", "b"}) {
		t.Fatalf("after Reset: %q, %v", got, err)
	}
}

// TestTranscripts reads the captured server streams and checks the event count and ending.
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*.sse")
	if len(files) == 0 {
		t.Fatal("no transcripts in ../testdata")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want := ref(string(b))
		got, err := readAll(NewReader(iotest.OneByteReader(bytes.NewReader(b))))
		if err != want.err || !equal(got, want.events) {
			t.Errorf("%s: got %d events (%v), reference %d (%v)", f, len(got), err, len(want.events), want.err)
		}
	}
}

func equal(a, b []event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// parsed is the reference parser's result.
type parsed struct {
	events []event
	err    error
}

// ref is a deliberately naive parser of the same rules (split the whole input into lines),
// used as an oracle in tests and fuzzing.
func ref(in string) parsed {
	var p parsed
	lines := strings.Split(in, "\n")
	rest := lines[len(lines)-1] // text after the last LF: an incomplete line
	lines = lines[:len(lines)-1]
	var data []string
	typ, has, errLine := "", false, false
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if i == 0 {
			l = strings.TrimPrefix(l, "\uFEFF")
		}
		switch {
		case l == "":
			if has {
				p.events = append(p.events, event{typ, strings.Join(data, "\n")})
			}
			data, typ, has, errLine = nil, "", false, false
		case l[0] == ':':
		default:
			name, value, _ := strings.Cut(l, ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "data":
				data, has = append(data, value), true
			case "error":
				data, has, errLine, typ = append(data, value), true, true, "error"
			case "event":
				if !errLine {
					typ = value
				}
			}
		}
	}
	p.err = io.EOF
	if rest != "" {
		p.err = io.ErrUnexpectedEOF
	} else if has {
		p.events = append(p.events, event{typ, strings.Join(data, "\n")})
	}
	return p
}

// FuzzReader checks the Reader against the naive reference parser, reading one byte at a time
// with a tiny buffer so that every line crosses buffer boundaries.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data:a\r\n\r\n", ": c\ndata: x\ndata: y\n\n", "event: error\ndata: e\n\n",
		"data: [DONE]\n\n", "data: cut", "\xEF\xBB\xBFdata: a\n", "data\n\n\n", "data: a\r\r\n\n",
		"error: {\"message\":\"m\"}\nevent: x\n\n", "event: x\nerror\n\n",
	} {
		f.Add(s)
	}
	if b, err := os.ReadFile("../testdata/llamacpp-b11669-chat.sse"); err == nil {
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, in string) {
		want := ref(in)
		got, err := readAll(NewReaderSize(iotest.OneByteReader(strings.NewReader(in)), 16))
		if err != want.err || !equal(got, want.events) {
			t.Fatalf("input %q:\n got %q, %v\nwant %q, %v", in, got, err, want.events, want.err)
		}
	})
}

// loopReader serves the same stream forever, as a long-running server would.
type loopReader struct {
	b   []byte
	off int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.b[l.off:])
	l.off = (l.off + n) % len(l.b)
	return n, nil
}

// BenchmarkSSEReader measures one event per op on a vLLM-like chat stream (about 300 bytes
// per event): ns/op is ns/event and allocs/op is allocations per event.
func BenchmarkSSEReader(b *testing.B) {
	ev := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",` +
		`"choices":[{"index":0,"delta":{"content":" token"},"logprobs":null,"finish_reason":null}],` +
		`"usage":{"prompt_tokens":100,"total_tokens":117,"completion_tokens":17}}` + "\n\n"
	r := NewReader(&loopReader{b: []byte(strings.Repeat(ev, 64))})
	b.SetBytes(int64(len(ev)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
