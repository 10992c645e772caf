package ndjson

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// lines reads every line of r.
func lines(t testing.TB, rd *Reader) ([]string, error) {
	var out []string
	for {
		l, err := rd.Next()
		if err != nil {
			return out, err
		}
		out = append(out, string(l))
	}
}

func TestSplitAcrossReads(t *testing.T) {
	in := "{\"a\":1}\n\r\n{\"b\":\n2}\r\n  \n{\"c\":3}"
	// one byte per read: every line is split across reads
	rd := NewReader(iotest.OneByteReader(strings.NewReader(in)))
	got, err := lines(t, rd)
	want := []string{`{"a":1}`, `{"b":`, `2}`, `{"c":3}`}
	if err != io.EOF || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
	if !rd.Unterminated() {
		t.Error("the last line had no newline but Unterminated is false")
	}
}

func TestLongLineAndLimit(t *testing.T) {
	long := `{"x":"` + strings.Repeat("y", 200<<10) + `"}`
	rd := NewReader(strings.NewReader(long + "\n{}\n"))
	got, err := lines(t, rd)
	if err != io.EOF || len(got) != 2 || got[0] != long || rd.Unterminated() {
		t.Fatalf("%d lines, %v", len(got), err)
	}
	rd = NewReader(strings.NewReader(long + "\n"))
	rd.MaxLineSize = 100 << 10
	if _, err := lines(t, rd); err != ErrLineTooLarge {
		t.Fatalf("err %v, want ErrLineTooLarge", err)
	}
}

func TestReadError(t *testing.T) {
	rd := NewReader(io.MultiReader(strings.NewReader("{}\n{\"half"), iotest.ErrReader(io.ErrClosedPipe)))
	got, err := lines(t, rd)
	if len(got) != 1 || err != io.ErrClosedPipe {
		t.Fatalf("%q %v", got, err)
	}
}

// FuzzReader checks that no input panics, every line returned is non-blank and free of
// newlines, and the lines are the input's non-blank lines whatever the read sizes.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"{}\n", "a\r\nb", "\n\n\n", "", "{\"response\":\"x\",\"done\":false}\n{\"done\":true}"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		var want []string
		for _, l := range bytes.Split(in, []byte("\n")) {
			if l = bytes.TrimSpace(l); len(l) > 0 {
				want = append(want, string(l))
			}
		}
		r := io.Reader(bytes.NewReader(in))
		if chunk%2 == 1 {
			r = iotest.OneByteReader(r)
		}
		got, err := lines(t, NewReader(r))
		if err != io.EOF {
			t.Fatalf("err %v", err)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("got %q want %q", got, want)
		}
	})
}
