package record

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
)

// Input is one run to read: one records file, or the shard files of one split run merged.
type Input struct {
	Label  string // the file's name without .jsonl, or "N shards merged"
	Header *Header
	read   func(*Record) error // the next record; io.EOF at the end
	where  func() string       // the file the last record or error came from
}

// InputsError is input that does not form runs: several files that are not the shards of one
// split run, or a file that is not one run (it wraps the *RunError, read after its header).
type InputsError struct{ Err error }

func (e *InputsError) Error() string { return e.Err.Error() }
func (e *InputsError) Unwrap() error { return e.Err }

// OpenInputs opens the files as runs: one file is one run; several shard files of one run are
// merged into one; with pair (the two sides of a comparison), two files that are not shards
// are two runs. Anything else is refused with the reason. closeAll closes every file.
func OpenInputs(paths []string, pair bool) (ins []*Input, closeAll func(), err error) {
	var files []*os.File
	closeAll = func() {
		for _, f := range files {
			f.Close()
		}
	}
	var srcs []Source
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		files = append(files, f)
		rd, err := NewReader(f)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		srcs = append(srcs, Source{Name: p, Reader: rd})
	}
	if ins, err = groupInputs(srcs, pair); err != nil {
		closeAll()
		return nil, nil, err
	}
	return ins, closeAll, nil
}

// groupInputs decides how the opened files form runs (see OpenInputs).
func groupInputs(srcs []Source, pair bool) ([]*Input, error) {
	if len(srcs) == 1 {
		return []*Input{single(srcs[0])}, nil
	}
	shards := 0
	for _, s := range srcs {
		if s.Reader.Header().Shard != "" {
			shards++
		}
	}
	if shards == 0 && pair && len(srcs) == 2 {
		return []*Input{single(srcs[0]), single(srcs[1])}, nil
	}
	if shards == 0 {
		return nil, &InputsError{fmt.Errorf("%d files that are not shards of one run: report merges only the shard files of a split run (run --shard i/n); to compare two runs use --format html or md with two files", len(srcs))}
	}
	m, err := Merge(srcs)
	if err != nil {
		return nil, err
	}
	label := fmt.Sprintf("%d shards merged", len(srcs))
	return []*Input{{Label: label, Header: m.Header(), read: m.Read, where: m.Name}}, nil
}

func single(s Source) *Input {
	label := strings.TrimSuffix(filepath.Base(s.Name), ".jsonl")
	return &Input{Label: label, Header: s.Reader.Header(), read: s.Reader.Read, where: func() string { return s.Name }}
}

// Records yields every valid record of the input. An invalid line (the cut last line of an
// interrupted run, or a corrupt one) is passed to skipped with its file, and passed over;
// any other error ends the sequence, named by its file (a file that is not one run: an
// *InputsError).
func (in *Input) Records(skipped func(file string, err *LineError)) iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		var rec Record
		for {
			err := in.read(&rec)
			if errors.Is(err, io.EOF) {
				return
			}
			var le *LineError
			var re *RunError
			if errors.As(err, &re) {
				yield(nil, &InputsError{fmt.Errorf("%s: %w", in.where(), err)})
				return
			}
			if errors.As(err, &le) {
				skipped(in.where(), le)
				continue
			}
			if err != nil {
				yield(nil, fmt.Errorf("%s: %w", in.where(), err))
				return
			}
			if !yield(&rec, nil) {
				return
			}
		}
	}
}
