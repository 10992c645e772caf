package record

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

// endless is an endless stream of one byte (NUL: /dev/zero), counting what was read of it.
type endless struct {
	c byte
	n int64
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.c
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestEndlessLineRefused: /dev/zero as a records file, or after a header, is refused once a
// line passes the buffer without opening a JSON object, having read and kept a bounded
// amount (`report /dev/zero` grew past 790 MB in 10 s and never ended).
func TestEndlessLineRefused(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	z := &endless{}
	if _, err := NewReader(z); !errors.Is(err, ErrNoHeader) {
		t.Errorf("/dev/zero: %v, want ErrNoHeader", err)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	_ = w.WriteHeader(&Header{Version: "test"})
	_ = w.Write(sample(0))
	_ = w.Flush()
	z2 := &endless{}
	rd, err := NewReader(io.MultiReader(&buf, z2))
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := rd.Read(&rec); err != nil {
		t.Fatal(err)
	}
	err = rd.Read(&rec)
	var re *RunError
	if !errors.As(err, &re) || re.Line != 3 {
		t.Errorf("an endless line 3: %v, want a RunError on line 3", err)
	}
	if again := rd.Read(&rec); again != err {
		t.Errorf("read after it: %v", again)
	}
	runtime.ReadMemStats(&after)
	if z.n+z2.n > 1<<20 || after.TotalAlloc-before.TotalAlloc > 16<<20 {
		t.Errorf("read %d bytes, allocated %d, for two endless lines", z.n+z2.n, after.TotalAlloc-before.TotalAlloc)
	}
}
