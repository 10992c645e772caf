package workload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// BurstGPT reads a BurstGPT-style CSV trace: a header line naming the columns, then one
// request per line. The columns used are found by name (case and surrounding spaces do not
// matter, order and other columns neither): "Timestamp" (seconds since the trace start),
// "Request tokens", "Response tokens", and "Model" when Model is set.
//
// BurstGPT logs a failed request with 0 response tokens; such rows (and rows with 0 request
// tokens, which no prompt can have) are skipped and counted in Trace.Dropped. Every prompt is
// unique, of exactly "Request tokens" tokens, its words depending only on (Seed, line).
type BurstGPT struct {
	Seed int64 `json:"seed"`
	// Nonce, when not 0, is mixed into the words (Synthetic.Nonce).
	Nonce uint64 `json:"nonce,omitempty"`
	Limit int    `json:"limit,omitempty"` // keep only the first Limit requests; 0 keeps all
	Model string `json:"model,omitempty"` // keep only rows whose "Model" is this ("ChatGPT", "GPT-4"); "" keeps all
	Chat  bool   `json:"chat,omitempty"`
	// MaxRecordBytes bounds a line (0 means DefaultMaxTraceLineBytes); not part of the identity.
	MaxRecordBytes int `json:"-"`
}

// Validate checks the settings.
func (b *BurstGPT) Validate() error {
	if b.Limit < 0 {
		return errors.New("request limit must not be negative")
	}
	return nil
}

// maxTraceTokens bounds one length of a trace row: no model has a longer context, and a
// corrupt huge number must be an error rather than an attempt to build a prompt that long.
const maxTraceTokens = 1 << 24

var burstFields = [4]string{`"Timestamp"`, `"Request tokens"`, `"Response tokens"`, `"Model"`}

// ReadFile reads and builds the trace at path; see Read.
func (b *BurstGPT) ReadFile(ctx context.Context, path string, tok Tokenizer) (*Trace, error) {
	return readFile(ctx, path, func(r io.Reader) (*Trace, error) { return b.Read(ctx, r, path, tok) })
}

// Read reads a CSV stream (name is used in error messages) and builds its prompts. With
// tok == nil lengths are approximate (one token per word) and Trace.Exact is false.
func (b *BurstGPT) Read(ctx context.Context, r io.Reader, name string, tok Tokenizer) (*Trace, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	rows, dropped, err := b.parse(r, name)
	if err != nil {
		return nil, err
	}
	tok, exact := orWords(tok)
	t, err := buildTrace(ctx, rows, tok, b.Chat, func(ctx context.Context, f *fitter, row *traceRow) (string, int, bool, error) {
		words := drawWords(streamRNG(textSeed(b.Seed, b.Nonce), domainTail, uint64(row.line)), wordsFor(row.in))
		return f.fit(ctx, "", words, "", row.in)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t.Exact = t.Exact && exact
	if !exact {
		t.Missed = 0
	}
	t.Dropped = dropped
	return t, nil
}

// parse reads the header and every row, checking them.
func (b *BurstGPT) parse(r io.Reader, name string) (rows []traceRow, dropped int, err error) {
	lr := newLineReader(r, traceLineBytes(b.MaxRecordBytes))
	bad := func(field string, err error) error {
		return &InputError{File: name, Line: lr.line, Offset: -1, Field: field, Err: err}
	}
	head, err := lr.next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("empty file: want a header line")
		}
		return nil, 0, bad("", err)
	}
	cols, err := b.columns(head)
	if err != nil {
		return nil, 0, bad("", err)
	}
	first, prev := math.NaN(), math.NaN()
	for b.Limit == 0 || len(rows) < b.Limit {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, bad("", err)
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		row, keep, field, err := b.row(line, cols, first, prev)
		if err != nil {
			return nil, 0, bad(field, err)
		}
		if !keep {
			dropped++
			continue
		}
		if len(rows) == 0 {
			first = row.atMS
		}
		row.line, prev = lr.line, row.atMS
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, 0, fmt.Errorf("%s: %w (%d rows skipped)", name, ErrNoRequests, dropped)
	}
	return rows, dropped, nil
}

// columns finds the used columns' indexes in the header: timestamp, request, response, model
// (-1 when Model is not filtered on).
func (b *BurstGPT) columns(head []byte) ([4]int, error) {
	names, err := splitCSV(head)
	if err != nil {
		return [4]int{}, fmt.Errorf("header: %w", err)
	}
	cols := [4]int{-1, -1, -1, -1}
	for i, n := range names {
		for k, f := range burstFields {
			if strings.EqualFold(strings.TrimSpace(n), strings.Trim(f, `"`)) && cols[k] < 0 {
				cols[k] = i
			}
		}
	}
	for k := range 3 {
		if cols[k] < 0 {
			return cols, fmt.Errorf("header has no %s column", burstFields[k])
		}
	}
	if b.Model != "" && cols[3] < 0 {
		return cols, fmt.Errorf("header has no %s column to filter on", burstFields[3])
	}
	if b.Model == "" {
		cols[3] = -1
	}
	return cols, nil
}

// row parses one data line. keep is false for a row that is skipped, not sent.
func (b *BurstGPT) row(line []byte, cols [4]int, first, prev float64) (row traceRow, keep bool, field string, err error) {
	vals, err := splitCSV(line)
	if err != nil {
		return row, false, "", err
	}
	get := func(k int) (string, error) {
		if cols[k] >= len(vals) {
			return "", fmt.Errorf("missing: the line has %d columns", len(vals))
		}
		return strings.TrimSpace(vals[cols[k]]), nil
	}
	if cols[3] >= 0 {
		m, err := get(3)
		if err != nil {
			return row, false, burstFields[3], err
		}
		if m != b.Model {
			return row, false, "", nil
		}
	}
	var num [3]float64
	for k := range num {
		s, err := get(k)
		if err == nil {
			num[k], err = strconv.ParseFloat(s, 64)
			if err == nil && k > 0 && num[k] != math.Trunc(num[k]) {
				err = fmt.Errorf("%v is not a whole number of tokens", num[k])
			}
		}
		if err != nil {
			return row, false, burstFields[k], err
		}
	}
	for k := 1; k < 3; k++ {
		switch {
		case num[k] < 0: // an error, not a skipped row: it is not how BurstGPT logs a failure
			return row, false, burstFields[k], fmt.Errorf("%v must not be negative", num[k])
		case num[k] > maxTraceTokens:
			return row, false, burstFields[k], fmt.Errorf("%v is over the %d-token limit", num[k], maxTraceTokens)
		case num[k] == 0:
			return row, false, "", nil
		}
	}
	row = traceRow{atMS: num[0] * 1000, in: int(num[1]), out: int(num[2])}
	if field, err := checkRow(&row, first, prev, 1000, burstFields); err != nil {
		return row, false, field, err
	}
	return row, true, "", nil
}

// splitCSV splits one CSV line (RFC 4180 quoting, without newlines inside quotes: a record is
// a line here, which is what keeps its size bounded). encoding/csv reads records of any size.
func splitCSV(line []byte) ([]string, error) {
	var out []string
	for {
		if len(line) > 0 && line[0] == '"' {
			var f strings.Builder
			i := 1
			for {
				j := bytes.IndexByte(line[i:], '"')
				if j < 0 {
					return nil, errors.New(`unterminated quoted field`)
				}
				f.Write(line[i : i+j])
				i += j + 1
				if i < len(line) && line[i] == '"' { // "" is a quote
					f.WriteByte('"')
					i++
					continue
				}
				break
			}
			out = append(out, f.String())
			line = line[i:]
			if len(line) > 0 && line[0] != ',' {
				return nil, errors.New(`text after a closing quote`)
			}
		} else {
			j := bytes.IndexByte(line, ',')
			if j < 0 {
				j = len(line)
			}
			out = append(out, string(line[:j]))
			line = line[j:]
		}
		if len(line) == 0 {
			return out, nil
		}
		line = line[1:] // the comma
	}
}

// readFile opens path for one bounded, cancellable pass and hands it to read.
func readFile(ctx context.Context, path string, read func(io.Reader) (*Trace, error)) (*Trace, error) {
	in, err := OpenInput(ctx, path, 0)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	defer in.Close()
	return read(in)
}

func trimSpace(b []byte) []byte { return bytes.TrimSpace(b) }
