package workload

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// DefaultMaxInputBytes bounds the whole of one input file (a dataset, a prompts file, a
// trace): ShareGPT_V3's 642 MB and BurstGPT's full release fit with room to spare, while
// /dev/zero, /dev/urandom or a runaway pipe stop with an error instead of reading forever.
const DefaultMaxInputBytes int64 = 8 << 30

// ErrInputTooLarge is the cause of an error for an input past its size bound.
var ErrInputTooLarge = errors.New("input too large")

// ErrNoRequests is the cause of an error for an input that holds no request at all (an empty
// file or array, a header alone, only blank lines or skipped rows): bad input, not a failure
// of the tool.
var ErrNoRequests = errors.New("no requests")

// ErrTooFew is the cause of an error for a dataset with fewer usable items than asked for.
var ErrTooFew = errors.New("too few conversations")

// Input is a file opened for one streaming pass: every byte read through it is hashed (so a
// dataset's identity costs no second read, and a pipe or process substitution, which can be
// read only once, works), the total is bounded, and reads stop once its context is done,
// also a read blocked on a pipe or FIFO that nobody writes.
type Input struct {
	ctx   context.Context
	name  string
	f     *os.File
	h     hash.Hash
	n     int64 // bytes read so far
	max   int64
	stop  func() bool
	cause error // sticky: the bound or the cancellation, once hit
}

// OpenInput opens path for one pass of at most max bytes (0 means DefaultMaxInputBytes).
// A FIFO is opened without blocking the caller: opening one waits for a writer, and ctx's
// end stops that wait too.
func OpenInput(ctx context.Context, path string, max int64) (*Input, error) {
	if max <= 0 {
		max = DefaultMaxInputBytes
	}
	f, err := openCancellable(ctx, path)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open %s: is a directory", path)
	}
	in := &Input{ctx: ctx, name: path, f: f, h: sha256.New(), max: max}
	// a pipe, FIFO or terminal is in Go's poller, so a read deadline ends a blocked read; a
	// regular file's read never blocks for long, and the check in Read stops the next one
	in.stop = context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	return in, nil
}

// openCancellable is os.Open, except that a FIFO's open, which blocks until a writer opens
// the other end, is abandoned when ctx ends. The abandoned open is then released by opening
// the write end ourselves (and closing it), so no goroutine stays blocked.
func openCancellable(ctx context.Context, path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
		return f, nil
	}
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, fmt.Errorf("open %s: %w", path, o.err)
		}
		return o.f, nil
	case <-ctx.Done():
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		go func() {
			if o := <-done; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, interrupted(path, ctx)
	}
}

// interrupted is the error of a read stopped by its context: it wraps the context's error,
// so that a caller can tell Ctrl-C from bad input.
func interrupted(name string, ctx context.Context) error {
	return fmt.Errorf("interrupted while reading %s: %w", filepath.Base(name), context.Cause(ctx))
}

// Read implements io.Reader.
func (in *Input) Read(p []byte) (int, error) {
	if in.cause != nil {
		return 0, in.cause
	}
	if in.ctx.Err() != nil {
		in.cause = interrupted(in.name, in.ctx)
		return 0, in.cause
	}
	if left := in.max - in.n; int64(len(p)) > left+1 {
		p = p[:left+1] // one byte past the bound is how a file over it is told from one at it
	}
	k, err := in.f.Read(p)
	if in.n+int64(k) > in.max {
		in.cause = fmt.Errorf("%s: %w: over the %s limit", filepath.Base(in.name), ErrInputTooLarge, FormatSize(in.max))
		return 0, in.cause
	}
	in.n += int64(k)
	in.h.Write(p[:k])
	if err != nil && in.ctx.Err() != nil && !errors.Is(err, io.EOF) {
		in.cause = interrupted(in.name, in.ctx)
		return k, in.cause
	}
	return k, err
}

// Sum reads what the parser left unread (a reader with a request limit stops early), so the
// hash is of the whole file, and returns it as "sha256:HEX".
func (in *Input) Sum() (string, error) {
	if _, err := io.Copy(io.Discard, onlyReader{in}); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(in.h.Sum(nil)), nil
}

// ID is the DatasetID of the whole file; see Sum.
func (in *Input) ID(format string) (DatasetID, error) {
	h, err := in.Sum()
	if err != nil {
		return DatasetID{}, err
	}
	return DatasetID{Format: format, File: filepath.Base(in.name), SHA256: h}, nil
}

// Close closes the file.
func (in *Input) Close() error {
	in.stop()
	return in.f.Close()
}

// onlyReader hides every method but Read, so io.Copy reads through Input.Read (os.File's
// WriteTo would bypass the hash and the bounds).
type onlyReader struct{ io.Reader }

// FormatSize writes a byte count the way --max-input takes it: 8GiB, 64MiB, 1000B.
func FormatSize(n int64) string {
	for _, u := range []struct {
		unit  string
		shift uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.unit)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// utf8BOM is the byte-order mark Excel's "CSV UTF-8" and Windows editors put first.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// skipBOM returns r without a leading UTF-8 byte-order mark.
func skipBOM(r io.Reader) io.Reader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	if b, err := br.Peek(len(utf8BOM)); err == nil && string(b) == string(utf8BOM) {
		_, _ = br.Discard(len(utf8BOM))
	}
	return br
}

// ParseSize reads a byte count as --max-input takes it: a whole number with an optional
// unit, B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000).
func ParseSize(s string) (int64, error) {
	num := strings.TrimRightFunc(s, unicode.IsLetter)
	unit := strings.ToUpper(s[len(num):])
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q: want a positive size such as 8GiB or 500MB", s)
	}
	mult := map[string]int64{"": 1, "B": 1, "K": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MIB": 1 << 20,
		"G": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TIB": 1 << 40,
		"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[unit]
	switch {
	case mult == 0:
		return 0, fmt.Errorf("%q: unknown unit %q (want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", s, s[len(num):])
	case n > math.MaxInt64/mult:
		return 0, fmt.Errorf("%q: too large", s)
	}
	return n * mult, nil
}
