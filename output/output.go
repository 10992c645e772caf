// Package output writes servebench's output files so that they never lose a byte: a regular
// file is written to a temporary file beside it and renamed over it only once every byte was
// written, flushed and synced; every write, flush and close error is returned with the path;
// an output that is also an input is refused before any work.
package output

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// File is an output being written. Write to it, then Commit (or Abort).
type File struct {
	path   string   // the target
	tmp    string   // the temporary file being written ("" when writing the target directly)
	f      *os.File //
	w      *bufio.Writer
	failed error
	done   bool
}

// Options says what Create may do to an existing target.
type Options struct {
	// Replace lets Commit replace an existing regular file. Without it an existing file is
	// refused by Create (ErrExists), before anything is written.
	Replace bool
}

// ErrExists is returned by Create when the target exists and Options.Replace is false.
var ErrExists = errors.New("exists")

// Create starts writing path. A regular file (or a path that does not exist yet) is written
// through a temporary file in the same directory, so a reader never sees half of it and a
// failure leaves any earlier file as it was. Anything else that exists (a terminal,
// /dev/stdout, a pipe, /dev/full) is written directly: renaming over a device would replace it.
func Create(path string, opt Options) (*File, error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil && (!fi.Mode().IsRegular() || strings.HasPrefix(filepath.Clean(path), "/dev/")):
		// /dev/stdout may point at a regular file, but its directory is no place for a rename
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &File{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
	case err == nil && !opt.Replace:
		return nil, fmt.Errorf("%s %w", path, ErrExists)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.partial")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	// CreateTemp makes the file private; an output is as readable as os.Create would make it,
	// or keeps the mode of the file it replaces
	mode := os.FileMode(0o644)
	if fi != nil {
		mode = fi.Mode().Perm()
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	return &File{path: path, tmp: f.Name(), f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Path is the target's path.
func (o *File) Path() string { return o.path }

// Partial is the file that holds what was written so far: the temporary file, or the target
// when it is written directly.
func (o *File) Partial() string {
	if o.tmp != "" {
		return o.tmp
	}
	return o.path
}

// Write implements io.Writer. The first error is kept, and every later Write returns it.
func (o *File) Write(p []byte) (int, error) {
	if o.failed != nil {
		return 0, o.failed
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.failed = o.errorf(err)
		return n, o.failed
	}
	return n, nil
}

// Flush writes the buffered bytes to the file.
func (o *File) Flush() error {
	if o.failed != nil {
		return o.failed
	}
	if err := o.w.Flush(); err != nil {
		o.failed = o.errorf(err)
	}
	return o.failed
}

func (o *File) errorf(err error) error {
	return fmt.Errorf("write %s: %w", o.path, unwrapPath(err))
}

// Commit flushes, syncs and closes the file and puts it in place. On any error the target is
// left as it was before Create (or, written directly, as far as it got) and the error names it.
func (o *File) Commit() error {
	if o.done {
		return o.failed
	}
	o.done = true
	err := o.Flush()
	if err == nil && o.tmp != "" {
		if serr := o.f.Sync(); serr != nil {
			err = o.errorf(serr)
		}
	}
	if cerr := o.f.Close(); err == nil && cerr != nil {
		err = o.errorf(cerr)
	}
	if err == nil && o.tmp != "" {
		if rerr := os.Rename(o.tmp, o.path); rerr != nil {
			err = o.errorf(rerr)
		}
	}
	if err != nil && o.tmp != "" {
		os.Remove(o.tmp)
	}
	o.failed = err
	return err
}

// Keep closes the file after a failure and leaves what was written in the temporary file,
// for an output whose partial content is worth keeping (a records file is valid up to its
// last complete line). It returns the path of the kept file.
func (o *File) Keep() string {
	if !o.done {
		o.done = true
		_ = o.w.Flush()
		o.f.Close()
	}
	return o.Partial()
}

// Abort closes the file and removes the temporary file; the target is left as it was.
func (o *File) Abort() {
	if o.done {
		return
	}
	o.done = true
	o.f.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
}

// WriteFile renders to path (Options.Replace: derived outputs such as a summary may replace an
// earlier one), or to stdout when path is "". A render error leaves no file behind.
func WriteFile(path string, stdout io.Writer, render func(io.Writer) error) error {
	if path == "" {
		return render(stdout)
	}
	f, err := Create(path, Options{Replace: true})
	if err != nil {
		return err
	}
	if err := render(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// NotInput refuses an output path that names one of the inputs (the same file by any
// spelling, or the same path when neither exists yet), before any work is done.
func NotInput(flag, out string, inputs ...string) error {
	if out == "" {
		return nil
	}
	oi, oerr := os.Stat(out)
	for _, in := range inputs {
		if in == "" {
			continue
		}
		if filepath.Clean(in) == filepath.Clean(out) {
			return fmt.Errorf("%s %s is also an input: choose another output", flag, out)
		}
		if oerr != nil || !oi.Mode().IsRegular() {
			continue
		}
		if ii, err := os.Stat(in); err == nil && os.SameFile(oi, ii) {
			return fmt.Errorf("%s %s is also an input (%s): choose another output", flag, out, in)
		}
	}
	return nil
}
