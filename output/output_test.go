package output

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommitRenamesAndKeepsNothingHalfWritten(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.jsonl")
	f, err := Create(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err == nil {
		t.Fatal("the target exists before Commit")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(b) != "hello\n" || fi.Mode().Perm() != 0o644 {
		t.Errorf("after Commit: %q, mode %v", b, fi.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.partial")); len(left) != 0 {
		t.Errorf("partial files left: %v", left)
	}
	if _, err := Create(p, Options{}); !errors.Is(err, ErrExists) {
		t.Errorf("an existing file without Replace: %v", err)
	}
	// a failed render leaves the earlier file byte-identical
	err = WriteFile(p, nil, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return errors.New("render failed")
	})
	if b2, _ := os.ReadFile(p); err == nil || string(b2) != "hello\n" {
		t.Errorf("a failed render: %v, file %q", err, b2)
	}
}

func TestDevFullIsAnErrorNamingThePath(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	err := WriteFile("/dev/full", nil, func(w io.Writer) error {
		_, err := w.Write(make([]byte, 1<<17))
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "/dev/full") {
		t.Errorf("write to /dev/full: %v", err)
	}
}

func TestNotInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{in, filepath.Join(dir, ".", "in.jsonl"), link} {
		if err := NotInput("-o", out, in); err == nil {
			t.Errorf("%s accepted as an output of input %s", out, in)
		}
	}
	if err := NotInput("-o", filepath.Join(dir, "other.jsonl"), in); err != nil {
		t.Error(err)
	}
}
