package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"
)

// TracedRequest is a request of a replayed trace with its arrival.
type TracedRequest struct {
	Request
	// At is the arrival offset from the trace's first request (which arrives at 0); pacer's
	// Arrival.T is At.Seconds(), and pacer.Trace's Offsets are the At of each request.
	At time.Duration `json:"at"`
	// HashIDs are the request's prefix blocks as the trace gives them (nil when it has none).
	HashIDs []int `json:"hash_ids,omitempty"`
	// Follow, when set, makes the request a later turn of a session: the trace's rows with
	// the same session_id are one conversation, sent in order (see Follow).
	Follow *Follow `json:"follow,omitempty"`
}

// Follow places a turn of a replayed session after the turn before it: the turn is sent at
// its arrival or, when the previous turn has not ended by then, Gap after it ends (a
// session's turns were sent one after another when the trace was taken; a replay that sent
// the next turn while the previous one still ran would change what the server caches).
type Follow struct {
	// Prev is the index of the previous turn of the session in the trace.
	Prev int `json:"prev"`
	// Gap is the recorded time from the previous turn's end (its end_timestamp) to this
	// turn's arrival, at least 0; −1 where the trace did not record the previous turn's end.
	Gap time.Duration `json:"gap"`
}

// Follows returns each request's Follow (nil for a request that follows none), or nil when
// no request of the trace follows another.
func (t *Trace) Follows() []*Follow {
	var out []*Follow
	for i := range t.Requests {
		if f := t.Requests[i].Follow; f != nil {
			if out == nil {
				out = make([]*Follow, len(t.Requests))
			}
			out[i] = f
		}
	}
	return out
}

// Trace is a materialised trace: requests in arrival order, IDs 0, 1, ….
type Trace struct {
	Requests []TracedRequest
	// Exact is true when every prompt has exactly its trace length in the tokenizer's tokens.
	Exact bool
	// Missed counts the prompts a tokenizer measured but could not build to their trace
	// length (0 without a tokenizer, when every length is approximate).
	Missed int
	// Dropped counts rows that were skipped, not sent (BurstGPT's failed requests, rows of
	// another model).
	Dropped int
}

// Plain returns the requests without their arrivals, for Hash, Save and the sender.
func (t *Trace) Plain() []Request {
	out := make([]Request, len(t.Requests))
	for i := range t.Requests {
		out[i] = t.Requests[i].Request
	}
	return out
}

// Offsets returns each request's arrival offset, the schedule of a trace pacer.
func (t *Trace) Offsets() []time.Duration {
	out := make([]time.Duration, len(t.Requests))
	for i := range t.Requests {
		out[i] = t.Requests[i].At
	}
	return out
}

// HashTrace is Hash for a trace: the requests, then the arrivals and settings. Two traces
// that send the same requests at other times hash differently.
func HashTrace(t *Trace, settings any) (string, error) {
	ns := make([]int64, len(t.Requests))
	for i := range t.Requests {
		ns[i] = int64(t.Requests[i].At)
	}
	return Hash(t.Plain(), struct {
		ArrivalsNS []int64 `json:"arrivals_ns"`
		Settings   any     `json:"settings"`
	}{ns, settings})
}

// traceRow is one parsed row of a trace before its prompt is built.
type traceRow struct {
	line    int
	atMS    float64 // as in the file; rebased when the trace is built
	in, out int
	hashIDs []int
	session string  // the session_id as in the file (its JSON), "" for none
	endMS   float64 // the answer's end (end_timestamp), NaN where the file has none
}

// maxTraceSpanMS bounds how long after its first request a trace's last one may arrive: a
// year, longer than any published trace (BurstGPT spans 121 days). Past it, an offset would
// come near time.Duration's 292 years, and a corrupt timestamp (1e13 ms) must be an error
// naming its line, not a schedule that wraps around.
const maxTraceSpanMS = 366 * 24 * 3600 * 1000

// DefaultMaxTraceLineBytes bounds a line of a trace (Mooncake, BurstGPT) unless MaxRecordBytes
// says otherwise: a line is a few numbers and at most some ten thousand hash ids, and a file
// that is not a trace (/dev/zero, a binary) fails after 16 MiB rather than 64.
const DefaultMaxTraceLineBytes = 16 << 20

func traceLineBytes(max int) int {
	if max <= 0 {
		return DefaultMaxTraceLineBytes
	}
	return max
}

// checkRow checks what every trace format requires of a row, naming the field at fault.
// first and prev are the first and the previous row's timestamps (ms), or NaN for the first
// row; msPerUnit is the file's time unit, so that a message quotes the file's own numbers.
func checkRow(r *traceRow, first, prev, msPerUnit float64, fields [4]string) (field string, err error) {
	switch {
	case math.IsNaN(r.atMS) || math.IsInf(r.atMS, 0) || r.atMS < 0:
		return fields[0], fmt.Errorf("%v must be a non-negative time", r.atMS/msPerUnit)
	case !math.IsNaN(first) && r.atMS-first > maxTraceSpanMS:
		return fields[0], fmt.Errorf("%v is more than a year (%v) after the first row's %v", r.atMS/msPerUnit,
			maxTraceSpanMS/msPerUnit, first/msPerUnit)
	case !math.IsNaN(prev) && r.atMS < prev:
		return fields[0], fmt.Errorf("%v is before the previous row's %v (a trace is replayed as it is, not re-sorted)",
			r.atMS/msPerUnit, prev/msPerUnit)
	case r.in < 1:
		return fields[1], fmt.Errorf("%d must be at least 1 token", r.in)
	case r.out < 1:
		return fields[2], fmt.Errorf("%d must be at least 1 token", r.out)
	case r.in > maxTraceTokens:
		return fields[1], fmt.Errorf("%d is over the %d-token limit", r.in, maxTraceTokens)
	case r.out > maxTraceTokens:
		return fields[2], fmt.Errorf("%d is over the %d-token limit", r.out, maxTraceTokens)
	}
	return "", nil
}

// Mooncake reads a Mooncake (FAST'25) or AIPerf mooncake_trace JSONL file: one request per
// line, {"timestamp": MS, "input_length": N, "output_length": M, "hash_ids": [ID, …]}.
//
// Every prompt is exactly input_length tokens, and hash_ids are honoured as shared prefix
// blocks of BlockTokens tokens: block k's text depends only on (Seed, k), so two requests
// that share hash id k share exactly the same text for that block and a server's prefix
// cache sees the trace's reuse. A prompt is its blocks' texts in order, the last block cut
// (or continued with unique words) so the whole prompt has input_length tokens. Each block
// text ends with a newline, which tokenizers keep as a token of its own, and is fitted after
// the block before it, so that the prompt's first k blocks are k·BlockTokens tokens even
// where a tokenizer counts a word after a newline otherwise than at the start of a text
// (llama.cpp's); the whole prompt is measured and its last part adjusted, so the length is
// exact even where a tokenizer merges across a seam.
type Mooncake struct {
	BlockTokens int   `json:"block_tokens"` // 0 means 512, Mooncake's block size
	Seed        int64 `json:"seed"`
	Limit       int   `json:"limit,omitempty"` // read only the first Limit requests; 0 reads all
	Chat        bool  `json:"chat,omitempty"`
	// MaxRecordBytes bounds a line (0 means DefaultMaxTraceLineBytes); not part of the identity.
	MaxRecordBytes int `json:"-"`
	// Nonce, when not 0, is mixed into the blocks' words (Synthetic.Nonce): another
	// invocation's blocks; shared hash ids stay shared within this one.
	Nonce uint64 `json:"nonce,omitempty"`
}

// WithDefaults returns the settings with a zero BlockTokens replaced by 512, the form to
// give HashTrace.
func (m Mooncake) WithDefaults() Mooncake {
	if m.BlockTokens == 0 {
		m.BlockTokens = 512
	}
	return m
}

// Validate checks the settings.
func (m *Mooncake) Validate() error {
	switch {
	case m.BlockTokens < 0:
		return errors.New("block size must be at least 1 token")
	case m.BlockTokens > maxTraceTokens:
		return fmt.Errorf("block size %d is over the %d-token limit", m.BlockTokens, maxTraceTokens)
	case m.Limit < 0:
		return errors.New("request limit must not be negative")
	}
	return nil
}

// mooncakeLine is one line as decoded; pointers tell a missing field from a zero.
type mooncakeLine struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      []int    `json:"hash_ids"`
	// SessionID and EndTimestamp are what servebench capture records of a session: rows of
	// one session are replayed in order (Follow).
	SessionID    json.RawMessage `json:"session_id"`
	EndTimestamp *float64        `json:"end_timestamp"`
}

var mooncakeFields = [4]string{`"timestamp"`, `"input_length"`, `"output_length"`, `"hash_ids"`}

// ReadFile reads and builds the trace at path; see Read.
func (m *Mooncake) ReadFile(ctx context.Context, path string, tok Tokenizer) (*Trace, error) {
	return readFile(ctx, path, func(r io.Reader) (*Trace, error) { return m.Read(ctx, r, path, tok) })
}

// Read reads a trace stream (name is used in error messages) and builds its prompts. With
// tok == nil lengths are approximate (one token per word) and Trace.Exact is false.
func (m *Mooncake) Read(ctx context.Context, r io.Reader, name string, tok Tokenizer) (*Trace, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	b := m.WithDefaults().BlockTokens
	rows, err := m.parse(r, name, b)
	if err != nil {
		return nil, err
	}
	tok, exact := orWords(tok)
	blocks := &blockTexts{seed: textSeed(m.Seed, m.Nonce), size: b, texts: map[blockKey]string{}}
	t, err := buildTrace(ctx, rows, tok, m.Chat, func(ctx context.Context, f *fitter, row *traceRow) (string, int, bool, error) {
		return blocks.prompt(ctx, f, row)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t.Exact = t.Exact && exact
	if !exact {
		t.Missed = 0
	}
	return t, nil
}

// parse reads and checks every line.
func (m *Mooncake) parse(r io.Reader, name string, block int) ([]traceRow, error) {
	lr := newLineReader(r, traceLineBytes(m.MaxRecordBytes))
	var rows []traceRow
	first, prev := math.NaN(), math.NaN()
	for m.Limit == 0 || len(rows) < m.Limit {
		b, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		bad := func(field string, err error) error {
			return &InputError{File: name, Line: lr.line, Offset: -1, Field: field, Err: err}
		}
		if err != nil {
			return nil, bad("", err)
		}
		if len(trimSpace(b)) == 0 {
			continue
		}
		var l mooncakeLine
		if err := json.Unmarshal(b, &l); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				return nil, bad(`"`+typ.Field+`"`, typeError(typ))
			}
			return nil, bad("", fmt.Errorf("invalid JSON: %v", err))
		}
		for i, p := range []bool{l.Timestamp == nil, l.InputLength == nil, l.OutputLength == nil} {
			if p {
				return nil, bad(mooncakeFields[i], errors.New("missing"))
			}
		}
		row := traceRow{line: lr.line, atMS: *l.Timestamp, in: *l.InputLength, out: *l.OutputLength, hashIDs: l.HashIDs,
			session: sessionKey(l.SessionID), endMS: math.NaN()}
		if e := l.EndTimestamp; e != nil && !math.IsNaN(*e) && !math.IsInf(*e, 0) {
			row.endMS = *e
		}
		if field, err := checkRow(&row, first, prev, 1, mooncakeFields); err != nil {
			return nil, bad(field, err)
		}
		// block ≤ maxTraceTokens and k-1 < the line's length, so the product cannot overflow
		if k := len(row.hashIDs); k > 0 && row.in <= (k-1)*block {
			return nil, bad(mooncakeFields[3], fmt.Errorf("%d blocks of %d tokens need an input_length over %d, not %d: set --block-tokens to the trace's block size",
				k, block, (k-1)*block, row.in))
		}
		if len(rows) == 0 {
			first = row.atMS
		}
		prev = row.atMS
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: %w: the file is empty or blank", name, ErrNoRequests)
	}
	return rows, nil
}

// blockTexts builds and remembers the text of each hash id's block.
type blockTexts struct {
	seed  int64
	size  int
	mu    sync.Mutex
	texts map[blockKey]string
}

// blockKey names a block's text: its hash id and the text of the block it follows ("" for
// the first). A block is fitted where it stands, after the block before it, because a
// tokenizer need not count a text the same alone and after a newline: llama.cpp's
// SentencePiece tokenizers give the first word of a text its "▁" and a word after a newline
// none, so a block of 16 tokens alone may take 17 or more after another block. In a trace
// whose ids chain (block k's id covers every block before it, as Mooncake's and capture's
// do) an id always follows the same block, so identical hash ids give identical text; the
// text before it is part of the key (not only its id) so that a trace that does not chain
// still builds the same prompts whatever order its rows are built in. The key's string is the
// cached text of the block before, not a copy.
type blockKey struct {
	id     int
	before string
}

// maxBlockTexts bounds the remembered blocks; past it they are forgotten (a block's text is a
// pure function of its key, so rebuilding one changes nothing but time).
const maxBlockTexts = 1 << 14

// words is block id's word draw: its full text is the longest prefix of it that fits, and a
// last, cut block takes a shorter prefix of the same draw, so its text is a prefix of the
// full block's.
func (bt *blockTexts) words(id int) []string {
	return drawWords(streamRNG(bt.seed, domainBlock, uint64(id)), wordsFor(bt.size))
}

// text is the text of block key.id after key.before: it adds bt.size tokens to before's count
// and ends in a newline. Fitting it after the previous block only, not the whole prefix,
// keeps the cost of a block independent of its place; tokens do not merge across a newline
// into the block before the previous one, so the prefix's count still grows by bt.size a
// block (and the whole prompt is measured again when it is built).
func (bt *blockTexts) text(ctx context.Context, f *fitter, key blockKey) (string, error) {
	before := key.before
	bt.mu.Lock()
	s, ok := bt.texts[key]
	bt.mu.Unlock()
	if ok {
		return s, nil
	}
	base := 0
	if before != "" {
		var err error
		if base, err = f.tok.Count(ctx, before); err != nil {
			return "", err
		}
	}
	s, _, _, err := f.fit(ctx, before, bt.words(key.id), "\n", base+bt.size)
	if err != nil {
		return "", err
	}
	s = s[len(before):]
	bt.mu.Lock()
	if len(bt.texts) >= maxBlockTexts {
		clear(bt.texts)
	}
	bt.texts[key] = s
	bt.mu.Unlock()
	return s, nil
}

// prompt builds a row's prompt: its full blocks, then the last block's words and unique ones
// fitted so the whole has row.in tokens. A last block the row fills (row.in at least its
// end) is its full text, as in a row that goes on past it, so the two share it.
func (bt *blockTexts) prompt(ctx context.Context, f *fitter, row *traceRow) (string, int, bool, error) {
	var head []byte
	var words []string
	last := row.in
	if k := len(row.hashIDs); k > 0 {
		full := k - 1
		if row.in >= k*bt.size { // no overflow: parse bounds row.in and bt.size, and k-1 < row.in
			full = k
		}
		before := ""
		for _, id := range row.hashIDs[:full] {
			s, err := bt.text(ctx, f, blockKey{id, before})
			if err != nil {
				return "", 0, false, err
			}
			head = append(head, s...)
			before = s
		}
		last -= full * bt.size
		if full < k {
			// the last block is cut to what is left, so only that much of its draw is needed
			// (a prefix of the full block's draw): a block of 16M tokens must not be drawn
			// whole for a 600-token prompt
			words = drawWords(streamRNG(bt.seed, domainBlock, uint64(row.hashIDs[k-1])), wordsFor(min(bt.size, last)))
		}
	}
	tail := drawWords(streamRNG(bt.seed, domainTail, uint64(row.line)), wordsFor(max(last-len(words), 0)))
	return f.fit(ctx, string(head), append(words, tail...), "", row.in)
}

// buildTrace builds every row's prompt in parallel (each depends only on its row and the
// seed, so the result does not depend on the schedule) and sets the arrivals, rebased so
// the first request arrives at 0.
func buildTrace(ctx context.Context, rows []traceRow, tok Tokenizer, chat bool,
	build func(context.Context, *fitter, *traceRow) (string, int, bool, error)) (*Trace, error) {
	t := &Trace{Requests: make([]TracedRequest, len(rows)), Exact: true}
	exact := make([]bool, len(rows))
	errs := make([]error, len(rows))
	fitters := [4]*fitter{newFitter(tok), newFitter(tok), newFitter(tok), newFitter(tok)}
	parallelW(len(rows), len(fitters), func(w, i int) {
		if errs[i] = ctx.Err(); errs[i] != nil {
			return
		}
		row := &rows[i]
		text, n, ok, err := build(ctx, fitters[w], row)
		tr := TracedRequest{Request: Request{ID: i, InputTokens: n, OutputTokens: row.out, SessionKey: sessionText(row.session)},
			At: time.Duration(math.Round((row.atMS - rows[0].atMS) * float64(time.Millisecond))), HashIDs: row.hashIDs}
		if chat {
			tr.Messages = []Message{{Role: "user", Content: text}}
		} else {
			tr.Prompt = text
		}
		t.Requests[i], exact[i], errs[i] = tr, ok, err
	})
	last := map[string]int{} // each session's latest turn
	for i := range rows {
		if errs[i] != nil {
			return nil, fmt.Errorf("line %d: %w", rows[i].line, errs[i])
		}
		t.Exact = t.Exact && exact[i]
		t.Missed += boolInt(!exact[i])
		if k := rows[i].session; k != "" {
			if prev, ok := last[k]; ok {
				f := &Follow{Prev: prev, Gap: -1}
				if end := rows[prev].endMS; !math.IsNaN(end) {
					f.Gap = time.Duration(math.Round(max(rows[i].atMS-end, 0) * float64(time.Millisecond)))
				}
				t.Requests[i].Follow = f
			}
			last[k] = i
		}
	}
	return t, nil
}

// sessionText is a session_id's JSON text (sessionKey) as the key a request sends: a
// string's value, a number's text.
func sessionText(key string) string {
	var s string
	if json.Unmarshal([]byte(key), &s) == nil {
		return s
	}
	return key
}

// sessionKey is a row's session_id as a key: its JSON text (a string or a number), "" for
// none, null or an empty string.
func sessionKey(raw json.RawMessage) string {
	k := string(trimSpace(raw))
	if k == "null" || k == `""` {
		return ""
	}
	return k
}
