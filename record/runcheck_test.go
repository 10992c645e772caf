package record

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// runFile writes a header and one record per (run, id) pair, with a run-end line after each
// run, as bench writes a --repeat file.
func runFile(t *testing.T, pairs ...[2]int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteHeader(&Header{Version: "x"}); err != nil {
		t.Fatal(err)
	}
	for i, p := range pairs {
		r := sample(p[1])
		r.Run = p[0]
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		if i == len(pairs)-1 || pairs[i+1][0] != p[0] {
			if err := w.WriteRunEnd(&RunEnd{Run: p[0]}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads every record of b: the count, and the first error other than io.EOF (after
// which it stops only for a *RunError: a *LineError is skipped, as report does).
func readAll(t *testing.T, b []byte) (int, error) {
	t.Helper()
	rd, err := NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var rec Record
	for {
		err := rd.Read(&rec)
		var le *LineError
		switch {
		case err == io.EOF:
			return n, nil
		case errors.As(err, &le):
			continue
		case err != nil:
			if again := rd.Read(&rec); again != err {
				t.Errorf("Read after %v = %v, want the same error", err, again)
			}
			return n, err
		}
		n++
	}
}

// TestRunsTheFileHolds: the runs of a --repeat or sweep file (run indexes 0, 1, 2, request IDs
// repeating from run to run, warmup IDs before measured ones) read as they were written.
func TestRunsTheFileHolds(t *testing.T) {
	b := runFile(t, [2]int{0, 0}, [2]int{0, 2}, [2]int{0, 1}, [2]int{1, 0}, [2]int{1, 1}, [2]int{3, 1}, [2]int{3, 0})
	if n, err := readAll(t, b); err != nil || n != 7 {
		t.Errorf("read %d records, %v; want 7, nil", n, err)
	}
	big := runFile(t, [2]int{0, 1 << 30}, [2]int{0, -5}, [2]int{0, 5}, [2]int{0, idBits - 1}, [2]int{0, idBits})
	if n, err := readAll(t, big); err != nil || n != 5 {
		t.Errorf("large and negative IDs: read %d records, %v; want 5, nil", n, err)
	}
}

// TestNotOneRun: a file that is not what one run wrote is a *RunError naming the line, never
// records pooled into one run.
func TestNotOneRun(t *testing.T) {
	a := runFile(t, [2]int{0, 0}, [2]int{0, 1})
	doubled := func() []byte { // every line written twice, header aside
		lines := strings.SplitAfter(string(a), "\n")
		var out strings.Builder
		out.WriteString(lines[0])
		for _, l := range lines[1:] {
			out.WriteString(l + l)
		}
		return []byte(out.String())
	}()
	cases := []struct {
		name string
		b    []byte
		line int
		want string
	}{
		{"concatenated", append(append([]byte{}, a...), a...), 5, "second header"},
		{"concatenated without the last newline", append(bytes.TrimSuffix(a, []byte("\n")), a...), 5, "request 0 of run 0 occurs twice"},
		{"every record twice", doubled, 3, "request 0 of run 0 occurs twice"},
		{"run goes back", runFile(t, [2]int{0, 0}, [2]int{1, 0}, [2]int{0, 1}), 6, "run index goes back from 1 to 0"},
		{"negative run", runFile(t, [2]int{-1, 0}), 2, "run index -1"},
		{"spaced header", append(append([]byte{}, a...), []byte("{ \"servebench_header\" : {}}\n")...), 5, "second header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAll(t, c.b)
			var re *RunError
			if !errors.As(err, &re) || re.Line != c.line || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v; want a *RunError at line %d saying %q", err, c.line, c.want)
			}
		})
	}
}
