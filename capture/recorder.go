package capture

import (
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"io"
	"math"
	"sync"
	"time"
)

// Line is one captured request, a line of a Mooncake trace (the fields `run --dataset
// mooncake:` reads: timestamp, input_length, output_length, hash_ids) with what else was
// captured, which the reader ignores.
type Line struct {
	// Timestamp is the arrival in milliseconds after the first captured request's.
	Timestamp float64 `json:"timestamp"`
	// InputLength is the prompt's tokens, counted as run counts a prompt it builds (the
	// tokenizer's count without special tokens), so a replay sends prompts of the same length.
	InputLength  int `json:"input_length"`
	OutputLength int `json:"output_length"`
	// HashIDs are the prompt's blocks of BlockTokens tokens, the last one partial: two
	// prompts share a block id where they begin with the same tokens up to its end.
	HashIDs []int  `json:"hash_ids"`
	API     string `json:"api"`
	// SessionID is the request's session or conversation key, hashed unless text is kept.
	SessionID string `json:"session_id,omitempty"`
	// EndTimestamp is when the answer's last byte passed to the client, on Timestamp's clock:
	// a replay sends a session's next turn as long after its previous turn's end as it came.
	EndTimestamp float64 `json:"end_timestamp,omitempty"`
	// CachedTokens is the prompt tokens the server said it served from its cache.
	CachedTokens *int `json:"cached_tokens,omitempty"`
	// ServerInputTokens is the prompt tokens the server counted (its usage), which may add a
	// BOS token or a chat template to InputLength.
	ServerInputTokens *int `json:"server_input_tokens,omitempty"`
	// Text is the prompt (or the messages) as sent, only with --keep-text.
	Text json.RawMessage `json:"text,omitempty"`
}

// entry is a request as the proxy finished it, before its block ids are assigned.
type entry struct {
	line   Line
	hashes []uint64 // chained block hashes
}

// blockHashes chains the hashes of the blocks of ids: block j's hash covers every token up
// to its end, so two prompts share block j's hash only where they begin alike up to there.
func blockHashes(ids []int, block int) []uint64 {
	out := make([]uint64, 0, (len(ids)+block-1)/block)
	var prev uint64
	var buf [8]byte
	for from := 0; from < len(ids); from += block {
		h := fnv.New64a()
		binary.LittleEndian.PutUint64(buf[:], prev)
		h.Write(buf[:])
		for _, id := range ids[from:min(from+block, len(ids))] {
			binary.LittleEndian.PutUint64(buf[:], uint64(id))
			h.Write(buf[:])
		}
		prev = h.Sum64()
		out = append(out, prev)
	}
	return out
}

// Flusher is where lines go: each line is written whole, then flushed, so that a capture
// stopped at any moment holds complete lines.
type Flusher interface {
	io.Writer
	Flush() error
}

// Recorder numbers requests as they arrive and writes them in that order as they finish: a
// trace must be in arrival order, and requests finish in another. Block ids are assigned in
// the order they first appear in the file.
type Recorder struct {
	mu      sync.Mutex
	w       Flusher
	start   time.Time
	first   time.Duration // the first request's arrival after start, -1 before it
	next    int           // the next sequence number to hand out
	written int           // the sequence numbers below it are written (or skipped)
	done    map[int]*entry
	ids     map[uint64]int
	err     error
	// Lines and Skipped count what was written and what was left out, by reason.
	Lines   int
	Skipped map[string]int
}

// NewRecorder returns a recorder writing to w.
func NewRecorder(w Flusher) *Recorder {
	return &Recorder{w: w, start: time.Now(), first: -1, done: map[int]*entry{}, ids: map[uint64]int{}, Skipped: map[string]int{}}
}

// Arrive numbers a request that has just arrived and stamps its arrival, on one clock and
// under one lock, so that sequence numbers are in arrival order.
func (r *Recorder) Arrive() (seq int, at time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at = time.Since(r.start)
	if r.first < 0 {
		r.first = at
	}
	seq = r.next
	r.next++
	return seq, at
}

// Skip finishes request seq without a line, for reason.
func (r *Recorder) Skip(seq int, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Skipped[reason]++
	r.done[seq] = nil
	r.flush()
}

// Now is the time on the arrivals' clock.
func (r *Recorder) Now() time.Duration { return time.Since(r.start) }

// finish finishes request seq with its entry: it arrived at at and its answer ended at end.
func (r *Recorder) finish(seq int, at, end time.Duration, e *entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// milliseconds rounded to the microsecond: the file stays short, the replay's clock finer
	e.line.Timestamp = math.Round(float64(at-r.first)/1e3) / 1e3
	e.line.EndTimestamp = math.Round(float64(end-r.first)/1e3) / 1e3
	r.done[seq] = e
	r.flush()
}

// flush writes every finished request whose predecessors are all finished.
func (r *Recorder) flush() {
	for {
		e, ok := r.done[r.written]
		if !ok {
			return
		}
		delete(r.done, r.written)
		r.written++
		if e == nil || r.err != nil {
			continue
		}
		e.line.HashIDs = make([]int, len(e.hashes))
		for i, h := range e.hashes {
			id, ok := r.ids[h]
			if !ok {
				id = len(r.ids)
				r.ids[h] = id
			}
			e.line.HashIDs[i] = id
		}
		b, err := json.Marshal(&e.line)
		if err == nil {
			_, err = r.w.Write(append(b, '\n'))
		}
		if err == nil {
			err = r.w.Flush()
		}
		if err != nil {
			r.err = err
			continue
		}
		r.Lines++
	}
}

// Err is the first write error.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Pending is how many arrived requests are not yet finished.
func (r *Recorder) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next - r.written
}
