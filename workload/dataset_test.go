package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestLineReader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want []string
		fail int // line number of a too-long error; 0 for none
	}{
		{"a\nbb\r\n\nccc", 10, []string{"a", "bb", "", "ccc"}, 0},
		{"abc\n", 3, []string{"abc"}, 0},
		{"abc", 3, []string{"abc"}, 0},
		{"ab\nabcd\nx", 3, []string{"ab"}, 2},
		{"abcd", 3, nil, 1},
		{strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 5000), 4999, []string{strings.Repeat("x", 100)}, 2},
	} {
		lr := newLineReader(strings.NewReader(tc.in), tc.max)
		var got []string
		for {
			b, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if !errors.Is(err, errRecordTooLong) || lr.line != tc.fail {
					t.Errorf("%q: line %d: %v, want too long at line %d", tc.in, lr.line, err, tc.fail)
				}
				break
			}
			got = append(got, string(b))
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: lines %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestLineReaderHugeLine reads a line much longer than the bound from a reader that never
// ends: it must fail after about the bound, not read on.
func TestLineReaderHugeLine(t *testing.T) {
	if raceEnabled {
		t.Skip("run without the race detector (scripts/test's second pass): one goroutine reads or builds hundreds of MB, many times the time under it")
	}
	var endless endlessX
	lr := newLineReader(&endless, 1<<20)
	if _, err := lr.next(); !errors.Is(err, errRecordTooLong) {
		t.Fatalf("err = %v", err)
	}
	if endless.n > 2<<20 {
		t.Fatalf("read %d bytes for a 1 MiB bound", endless.n)
	}
	_, err := Read(io.LimitReader(&endlessX{}, 200<<20), "big.jsonl", 1)
	if err == nil || !strings.Contains(err.Error(), "big.jsonl:1: record too long") {
		t.Fatalf("prompts file with a huge line: %v", err)
	}
}

type endlessX struct{ n int }

func (e *endlessX) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += len(p)
	return len(p), nil
}

func TestFileHash(t *testing.T) {
	p := filepath.Join(t.TempDir(), "d.json")
	os.WriteFile(p, []byte("[]"), 0o644)
	h, err := FileHash(p)
	if want := "sha256:" + sha([]byte("[]")); err != nil || h != want {
		t.Fatalf("FileHash = %s, %v; want %s", h, err, want)
	}
	id, err := IdentifyFile("sharegpt", p)
	if err != nil || id != (DatasetID{"sharegpt", "d.json", h}) {
		t.Fatalf("IdentifyFile = %+v, %v", id, err)
	}
	if _, err := FileHash(p + ".missing"); err == nil || !strings.Contains(err.Error(), "d.json.missing") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestInputErrorFormat(t *testing.T) {
	cause := errors.New("bad\nthing")
	for _, tc := range []struct {
		e    InputError
		want string
	}{
		{InputError{File: "f", Line: 3, Offset: -1, Field: `"x"`, Err: cause}, `f:3: "x": bad thing`},
		{InputError{File: "f", Item: 2, Offset: 40, Err: cause}, `f: item 2 (byte 40): bad thing`},
		{InputError{File: "f", Item: 2, Offset: -1, Err: cause}, `f: item 2: bad thing`},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
		if !errors.Is(&tc.e, cause) {
			t.Error("the cause does not unwrap")
		}
	}
}
