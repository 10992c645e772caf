package recorded

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"

	"github.com/ulikunitz/xz"
	"github.com/ulikunitz/xz/lzma"

	"servebench/record"
)

// A stored file (NAME.rec.xz) is a records file in columns, xz-compressed:
//
//	magic                  "servebench recorded 3\n"
//	text                   uvarint length, then the file's lines (header, run ends,
//	                       telemetry, …) byte for byte, each record's line re-encoded
//	                       with its times and events taken out
//	columns                each a uvarint length, then its bytes, one value per record
//	                       (per event for the event columns), in record order
//
// The times (scheduled, dispatched, sent, headers, first_event, done: ns) are kept exactly,
// each as the zigzag varint of its difference from the one before it in the request (0 for
// a time the record lacks); the events' stamps are kept to 10 µs (stampUnit), the gaps
// between them as 16-bit big-endian numbers, which LZMA models far better than varints or
// decimal text (measured: 21% smaller than varints, 37% smaller than the gzipped JSON lines
// of format 1). A record's other fields stay JSON in the text, where they repeat and cost
// almost nothing compressed.
//
// Format 2 ("servebench recorded 2\n") is the same with the stamps to the microsecond: it is
// still read, and Repack rewrites it in format 3.
const magic = "servebench recorded 3\n"

const magic2 = "servebench recorded 2\n"

// Ext is a stored file's extension.
const Ext = ".rec.xz"

// stampUnit is the resolution events are stored at, in ns: 10 µs, a hundredth of the
// simulator's shortest gap between tokens and below the client's own timing noise (events of
// one decode step reach the client tens to hundreds of µs apart). The gaps' last decimal
// digit at 1 µs was that noise, incompressible: about a third of a format 2 file.
const stampUnit = 10_000

// stampUnit2 is format 2's.
const stampUnit2 = 1000

// round is t to the nearest multiple of unit.
func round(t, unit int64) int64 { return (t + unit/2) / unit * unit }

// the columns, in the file's order
const (
	colScheduled = iota // zigzag delta from the record before
	colTimes            // dispatched, sent, headers, first_event, done: chained deltas
	colConnect          // connect (ns)
	colEvents           // number of events
	colFirst            // first event (µs) − first_event rounded to µs, zigzag
	colGaps             // gaps between events (µs), 2 bytes big-endian; 0xffff: see colWide
	colWide             // gaps outside [0, 0xffff), zigzag varints
	colTokens           // each event's token count, zigzag varint
	nCols
)

const wideGap = 0xffff

// Pack writes the records file read from r to w in the stored form. It checks that the
// stored form reads back as the original, event stamps rounded to 10 µs.
func Pack(w io.Writer, r io.Reader) error {
	var text bytes.Buffer
	var cols [nCols][]byte
	var want []record.Record
	enc := json.NewEncoder(&text)
	enc.SetEscapeHTML(false)
	br := bufio.NewReaderSize(r, 1<<20)
	prevSched := int64(0)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if !bytes.HasPrefix(line, recordPrefix) {
				text.Write(line)
			} else {
				var rec record.Record
				if err := json.Unmarshal(line, &rec); err != nil {
					return fmt.Errorf("recorded: a record line: %w", err)
				}
				for k := range rec.Events {
					rec.Events[k].T = round(rec.Events[k].T, stampUnit)
				}
				want = append(want, rec)
				putRecord(&cols, &rec, &prevSched)
				rest := rec
				rest.Scheduled, rest.Dispatched, rest.Connect, rest.Sent, rest.Headers, rest.FirstEvent, rest.Done, rest.Events = 0, 0, 0, 0, 0, 0, 0, nil
				if err := enc.Encode(&rest); err != nil {
					return err
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	var raw bytes.Buffer
	raw.WriteString(magic)
	raw.Write(binary.AppendUvarint(nil, uint64(text.Len())))
	raw.Write(text.Bytes())
	for _, c := range cols {
		raw.Write(binary.AppendUvarint(nil, uint64(len(c))))
		raw.Write(c)
	}
	// check: the stored form reads back as what was packed
	rd, err := newReader(raw.Bytes())
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		var rec record.Record
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			if i != len(want) {
				return fmt.Errorf("recorded: %d records read back of %d", i, len(want))
			}
			break
		}
		if err != nil {
			return fmt.Errorf("recorded: reading back: %w", err)
		}
		if i >= len(want) || !reflect.DeepEqual(rec, want[i]) {
			return fmt.Errorf("recorded: record %d reads back otherwise", i)
		}
	}
	// LZMA's literal coder with one position bit: the 2-byte gaps' high and low bytes are
	// modelled apart (measured 3% smaller than the defaults on these files)
	return compress(w, raw.Bytes())
}

// xzArgs compress with liblzma's xz at its strongest preset, the literal coder with one
// position bit and no context bits: the 2-byte gaps' high and low bytes are modelled apart
// (3% smaller than the defaults on these files). Go's LZMA encoders compress these files
// about a third less (github.com/ulikunitz/xz: 50 kB where xz writes 36 kB, about gzip's
// 53 kB), so packing takes the xz command; reading takes only the Go decoder. The
// dictionary is the smallest power of two that holds the file: the decoder allocates it.
func xzArgs(n int) []string {
	dict := 4 << 10
	for dict < n {
		dict *= 2
	}
	return []string{"--format=xz", "--check=crc64", fmt.Sprintf("--lzma2=preset=9e,dict=%d,lc=0,lp=1,pb=1", dict), "--stdout", "-T1"}
}

func compress(w io.Writer, raw []byte) error {
	cmd := exec.Command("xz", xzArgs(len(raw))...)
	cmd.Stdin = bytes.NewReader(raw)
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("recorded: xz (liblzma's command, needed to pack): %v %s", err, stderr.Bytes())
	}
	return nil
}

// Repack writes a stored file read from r to w as Pack would now: a file of format 3
// compressed again, one of format 2 packed anew from the records file it holds (its stamps
// rounded to 10 µs).
func Repack(w io.Writer, r io.Reader) error {
	raw, err := decompress(r)
	if err != nil {
		return err
	}
	text, x, err := parse(raw)
	if err != nil {
		return err
	}
	if x.unit == stampUnit {
		return compress(w, raw)
	}
	recs, err := x.expand(text)
	if err != nil {
		return err
	}
	return Pack(w, bytes.NewReader(recs))
}

// recordPrefix begins a record's line (and no other line) of a records file.
var recordPrefix = []byte(`{"id":`)

// expand returns the records file of a stored file's text, x holding its columns.
func (x *Reader) expand(text []byte) ([]byte, error) {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line = text[:i+1]
		}
		text = text[len(line):]
		if !bytes.HasPrefix(line, recordPrefix) {
			out.Write(line)
			continue
		}
		var rec record.Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("recorded: a record line: %w", err)
		}
		if err := x.times(&rec); err != nil {
			return nil, err
		}
		if err := enc.Encode(&rec); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// decompress reads an xz stream whole, its dictionary allocated at the size its header gives
// (not the Go decoder's default 8 MiB, which would be most of the time reading a small file).
func decompress(r io.Reader) ([]byte, error) {
	zr, err := xz.ReaderConfig{DictCap: lzma.MinDictCap, SingleStream: true}.NewReader(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("recorded: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("recorded: %w", err)
	}
	return raw, nil
}

// putRecord appends rec's times and events to the columns.
func putRecord(cols *[nCols][]byte, rec *record.Record, prevSched *int64) {
	cols[colScheduled] = appendZigzag(cols[colScheduled], rec.Scheduled-*prevSched)
	*prevSched = rec.Scheduled
	ref := rec.Scheduled
	for _, t := range [...]int64{rec.Dispatched, rec.Sent, rec.Headers, rec.FirstEvent, rec.Done} {
		if t == 0 {
			cols[colTimes] = binary.AppendUvarint(cols[colTimes], 0)
			continue
		}
		cols[colTimes] = binary.AppendUvarint(cols[colTimes], zigzag(t-ref)+1)
		ref = t
	}
	cols[colConnect] = binary.AppendUvarint(cols[colConnect], uint64(rec.Connect))
	cols[colEvents] = binary.AppendUvarint(cols[colEvents], uint64(len(rec.Events)))
	prev := int64(0)
	for k, e := range rec.Events {
		t := e.T / stampUnit
		if k == 0 {
			cols[colFirst] = appendZigzag(cols[colFirst], t-round(rec.FirstEvent, stampUnit)/stampUnit)
		} else if g := t - prev; g >= 0 && g < wideGap {
			cols[colGaps] = binary.BigEndian.AppendUint16(cols[colGaps], uint16(g))
		} else {
			cols[colGaps] = binary.BigEndian.AppendUint16(cols[colGaps], wideGap)
			cols[colWide] = appendZigzag(cols[colWide], g)
		}
		prev = t
		cols[colTokens] = appendZigzag(cols[colTokens], int64(e.N))
	}
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

func appendZigzag(b []byte, v int64) []byte { return binary.AppendUvarint(b, zigzag(v)) }

// Reader reads a stored file as record.Reader reads a records file: the header, then the
// records one by one, the run-end and telemetry lines gathered into the header as they come.
type Reader struct {
	rd   *record.Reader
	cols [nCols][]byte
	unit int64 // the stamps' resolution (ns): stampUnit, or stampUnit2 in format 2
	prev int64 // the last record's scheduled time
	err  error
}

// NewReader reads a stored file from r.
func NewReader(r io.Reader) (*Reader, error) {
	raw, err := decompress(r)
	if err != nil {
		return nil, err
	}
	return newReader(raw)
}

var errFormat = errors.New("recorded: not a stored file of format 2 or 3")

func newReader(raw []byte) (*Reader, error) {
	text, x, err := parse(raw)
	if err != nil {
		return nil, err
	}
	if x.rd, err = record.NewReader(bytes.NewReader(text)); err != nil {
		return nil, err
	}
	return x, nil
}

// parse splits a stored file into its text and a Reader of its columns, without the text's.
func parse(raw []byte) ([]byte, *Reader, error) {
	x := &Reader{}
	switch {
	case bytes.HasPrefix(raw, []byte(magic)):
		x.unit = stampUnit
	case bytes.HasPrefix(raw, []byte(magic2)):
		x.unit = stampUnit2
	default:
		return nil, nil, errFormat
	}
	raw = raw[len(magic):] // the magics are of one length
	section := func() ([]byte, error) {
		n, k := binary.Uvarint(raw)
		if k <= 0 || uint64(len(raw)-k) < n {
			return nil, errFormat
		}
		s := raw[k : k+int(n)]
		raw = raw[k+int(n):]
		return s, nil
	}
	text, err := section()
	if err != nil {
		return nil, nil, err
	}
	for i := range x.cols {
		if x.cols[i], err = section(); err != nil {
			return nil, nil, err
		}
	}
	return text, x, nil
}

// Header is the file's header.
func (x *Reader) Header() *record.Header { return x.rd.Header() }

// Read reads the next record into rec (its Events a fresh slice); io.EOF at the end.
func (x *Reader) Read(rec *record.Record) error {
	if x.err != nil {
		return x.err
	}
	if err := x.rd.Read(rec); err != nil {
		return err
	}
	if err := x.times(rec); err != nil {
		x.err = err
		return err
	}
	return nil
}

func (x *Reader) uvarint(c int) uint64 {
	v, k := binary.Uvarint(x.cols[c])
	if k <= 0 {
		x.err = errFormat
		return 0
	}
	x.cols[c] = x.cols[c][k:]
	return v
}

// times fills rec's times and events from the columns.
func (x *Reader) times(rec *record.Record) error {
	rec.Scheduled = x.prev + unzigzag(x.uvarint(colScheduled))
	x.prev = rec.Scheduled
	ref := rec.Scheduled
	for _, p := range [...]*int64{&rec.Dispatched, &rec.Sent, &rec.Headers, &rec.FirstEvent, &rec.Done} {
		if u := x.uvarint(colTimes); u > 0 {
			*p = ref + unzigzag(u-1)
			ref = *p
		}
	}
	rec.Connect = int64(x.uvarint(colConnect))
	n := x.uvarint(colEvents)
	if x.err != nil || n > uint64(len(x.cols[colTokens])) {
		return errFormat
	}
	rec.Events = nil
	if n > 0 {
		rec.Events = make([]record.Event, n)
	}
	t := int64(0)
	for k := range rec.Events {
		if k == 0 {
			t = round(rec.FirstEvent, x.unit)/x.unit + unzigzag(x.uvarint(colFirst))
		} else {
			if len(x.cols[colGaps]) < 2 {
				return errFormat
			}
			g := int64(binary.BigEndian.Uint16(x.cols[colGaps]))
			x.cols[colGaps] = x.cols[colGaps][2:]
			if g == wideGap {
				g = unzigzag(x.uvarint(colWide))
			}
			t += g
		}
		rec.Events[k] = record.Event{T: t * x.unit, N: int32(unzigzag(x.uvarint(colTokens)))}
	}
	return x.err
}

// ReadFile reads a stored file of dir whole: its header and records.
func ReadFile(dir, name string) (*record.Header, []record.Record, error) {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	x, err := NewReader(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	var recs []record.Record
	for {
		var rec record.Record
		err := x.Read(&rec)
		if errors.Is(err, io.EOF) {
			return x.Header(), recs, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		recs = append(recs, rec)
	}
}
