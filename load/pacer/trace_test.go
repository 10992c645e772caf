package pacer

import (
	"strings"
	"testing"
	"time"
)

func TestTraceReplaysExactly(t *testing.T) {
	in := `{"t": 0}
{"t": 0.001, "input_tokens": 12, "output_tokens": 3}

{"t": 0.001}
{"t": 2.5}
`
	as, err := ReadTrace(strings.NewReader(in), "a.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if as[1].InputTokens != 12 || as[1].OutputTokens != 3 {
		t.Errorf("lengths %+v", as[1])
	}
	p := NewTrace(as)
	want := []time.Duration{0, time.Millisecond, time.Millisecond, 2500 * time.Millisecond}
	for n, w := range want {
		if d, ok := p.Due(n); !ok || d != w {
			t.Errorf("Due(%d) = %v %v, want %v", n, d, ok, w)
		}
	}
	if _, ok := p.Due(len(want)); ok {
		t.Error("the schedule goes on after the trace's last arrival")
	}
}

func TestTraceErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"t": 1}` + "\n" + `{"t": 0.5}`, "a.jsonl:2: offset 0.5 s is before"},
		{`{"t": -1}`, "a.jsonl:1: offset -1"},
		{`{"t": 1`, "a.jsonl:1"},
		{``, "no arrivals"},
		{`{"t": 1, "output_tokens": -3}`, "negative"},
	} {
		_, err := ReadTrace(strings.NewReader(tc.in), "a.jsonl")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}
