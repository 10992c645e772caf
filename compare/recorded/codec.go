// Package recorded holds the HTTP sets behind compare's published rates as test data
// (compare/testdata/recorded): records files made by scripts/validate-compare, stored
// compressed, with a manifest naming each pair's expected class, when and how it was
// recorded, and whether it is a design set (made while the policy's rules were chosen) or
// held out (made after they froze). The steady check's recorded sets (metrics/testdata/recorded)
// are stored the same way.
//
// A stored file is in format 3 (store.go: NAME.rec.xz, the records in columns, xz-compressed,
// events to 10 µs; Pack writes it, NewReader and ReadFile read it, and format 2's, the same
// to the microsecond, which Repack rewrites in format 3). Format 1, this file's
// (NAME.jsonl.gz: the records file gzipped, each record's content events written as the
// gaps between their arrivals in microseconds, "events":[[t1,1],[t2,1],…] becoming
// "ev":[t1,t2−t1,…] and "evn":[t1,n1,t2−t1,n2,…] where an event carried other than one
// token), is read by Expand only to convert such files (pack -convert).
package recorded

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strconv"
)

// Compact writes the records file read from r to w in the stored form, gzip-compressed.
func Compact(w io.Writer, r io.Reader) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	br := bufio.NewReaderSize(r, 1<<20)
	bw := bufio.NewWriterSize(zw, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			out, cerr := compactLine(line)
			if cerr != nil {
				return cerr
			}
			if _, werr := bw.Write(out); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// Expand returns the records file a stored file holds (gzip-compressed, from r).
func Expand(r io.Reader) ([]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	var out bytes.Buffer
	br := bufio.NewReaderSize(zr, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			x, xerr := expandLine(line)
			if xerr != nil {
				return nil, xerr
			}
			out.Write(x)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// unit is the resolution events are stored at, in ns: a microsecond, a thousandth of the
// simulator's shortest gap between tokens and far below the client's own timing noise;
// stamps in nanoseconds would double the files' size for digits no verdict reads.
const unit = 1000

var (
	eventsKey = []byte(`"events":[`)
	evKey     = []byte(`"ev":[`)
	evnKey    = []byte(`"evn":[`)
)

// compactLine rewrites a record line's events as gaps; other lines pass unchanged.
func compactLine(line []byte) ([]byte, error) {
	if !bytes.HasPrefix(line, []byte(`{"id":`)) {
		return line, nil
	}
	i := bytes.Index(line, eventsKey)
	if i < 0 {
		return line, nil
	}
	j := i + len(eventsKey)
	end := bytes.Index(line[j:], []byte("]]"))
	if end < 0 {
		return nil, fmt.Errorf("recorded: an events list without its end")
	}
	body := line[j : j+end+1] // [t,n],[t,n],…,[t,n]
	var ts, ns []int64
	ones := true
	for len(body) > 0 {
		if body[0] == ',' {
			body = body[1:]
		}
		k := bytes.IndexByte(body, ']')
		if body[0] != '[' || k < 0 {
			return nil, fmt.Errorf("recorded: an event is not [t,n]")
		}
		a, b, ok := bytes.Cut(body[1:k], []byte(","))
		if !ok {
			return nil, fmt.Errorf("recorded: an event is not [t,n]")
		}
		t, err := strconv.ParseInt(string(a), 10, 64)
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseInt(string(b), 10, 32)
		if err != nil {
			return nil, err
		}
		ts, ns = append(ts, t), append(ns, n)
		ones = ones && n == 1
		body = body[k+1:]
	}
	var out []byte
	out = append(out, line[:i]...)
	if ones {
		out = append(out, evKey...)
	} else {
		out = append(out, evnKey...)
	}
	prev := int64(0)
	for k, t := range ts {
		if k > 0 {
			out = append(out, ',')
		}
		t = (t + unit/2) / unit
		out = strconv.AppendInt(out, t-prev, 10)
		prev = t
		if !ones {
			out = append(out, ',')
			out = strconv.AppendInt(out, ns[k], 10)
		}
	}
	out = append(out, ']')
	out = append(out, line[j+end+2:]...)
	return out, nil
}

// expandLine undoes compactLine.
func expandLine(line []byte) ([]byte, error) {
	if !bytes.HasPrefix(line, []byte(`{"id":`)) {
		return line, nil
	}
	key, ones := evKey, true
	i := bytes.Index(line, evKey)
	if i < 0 {
		key, ones = evnKey, false
		if i = bytes.Index(line, evnKey); i < 0 {
			return line, nil
		}
	}
	j := i + len(key)
	end := bytes.IndexByte(line[j:], ']')
	if end < 0 {
		return nil, fmt.Errorf("recorded: a gaps list without its end")
	}
	fields := bytes.Split(line[j:j+end], []byte(","))
	out := append([]byte(nil), line[:i]...)
	out = append(out, eventsKey...)
	t := int64(0)
	step := 1
	if !ones {
		step = 2
	}
	for k := 0; k+step <= len(fields); k += step {
		d, err := strconv.ParseInt(string(fields[k]), 10, 64)
		if err != nil {
			return nil, err
		}
		t += d * unit
		if k > 0 {
			out = append(out, ',')
		}
		out = append(out, '[')
		out = strconv.AppendInt(out, t, 10)
		out = append(out, ',')
		if ones {
			out = append(out, '1')
		} else {
			out = append(out, fields[k+1]...)
		}
		out = append(out, ']')
	}
	out = append(out, ']')
	out = append(out, line[j+end+1:]...)
	return out, nil
}
