package record

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"servebench/jsonscan"
)

// The fast path of Reader.Read. json.Unmarshal read records at about 16 MB/s (reflection,
// and one Event.UnmarshalJSON call, itself a json.Unmarshal, per event), so `report` on a
// large file was slower than the run that wrote it. This decoder walks a record line once,
// validating it as JSON, in the field layout Writer produces.
//
// json.Unmarshal stays the definition of correct: the fast path gives up (and the line is
// decoded by json.Unmarshal) whenever it could disagree — a key with escapes or non-ASCII
// bytes, a key differing only in case from a field name (encoding/json matches those), a
// repeated field, a number that is not a plain integer where an integer goes, an event that
// is not exactly [t, n], a null where a list or map goes, very deep nesting. FuzzFastRecord
// checks that whenever the fast path succeeds, json.Unmarshal agrees. The walker is
// jsonscan, a standard-library-only leaf shared with the stream decoder.

// scanner reads one record line: the shared walker plus this package's fields.
type scanner struct{ jsonscan.Scanner }

// decodeFast decodes line into rec (already reset). False means: use json.Unmarshal.
func decodeFast(line []byte, rec *Record) bool {
	s := scanner{jsonscan.Scanner{B: line, Known: knownBit, Folds: foldsToKnown}}
	if !s.Object(func(key []byte) bool { return s.field(key, rec) }) {
		return false
	}
	s.WS()
	return s.I == len(s.B)
}

// field decodes the value of one record key.
func (s *scanner) field(key []byte, r *Record) bool {
	if p := intField(key, r); p != nil {
		return s.Int(p)
	}
	if p := int64Field(key, r); p != nil {
		return s.Int64(p)
	}
	if p := stringField(key, r); p != nil {
		return s.string(p)
	}
	switch string(key) {
	case "events":
		return s.events(r)
	case "fixed_output":
		return s.bool(&r.FixedOutput)
	case "server":
		return s.server(r)
	case "tool_calls":
		return s.toolCalls(r) // tools.go
	case "correct", "schema_valid":
		return s.answerFlag(key, r) // answers.go
	}
	_, ok := s.Value()
	return ok
}

func intField(key []byte, r *Record) *int {
	switch string(key) {
	case "id":
		return &r.ID
	case "run":
		return &r.Run
	case "shard":
		return &r.Shard
	case "session":
		return &r.Session
	case "turn":
		return &r.Turn
	case "stage":
		return &r.Stage
	case "input_tokens":
		return &r.InputTokens
	case "max_tokens":
		return &r.MaxTokens
	case "prompt_tokens":
		return &r.PromptTokens
	case "output_tokens":
		return &r.OutputTokens
	case "status":
		return &r.Status
	case "reasoning_events":
		return &r.ReasoningEvents
	case "reasoning_tokens":
		return &r.ReasoningTokens
	case "images":
		return &r.Images
	case "audio_clips":
		return &r.AudioClips
	case "task":
		return &r.Task
	case "step":
		return &r.Step
	case "inputs":
		return &r.Inputs
	}
	return nil
}

func int64Field(key []byte, r *Record) *int64 {
	switch string(key) {
	case "scheduled":
		return &r.Scheduled
	case "dispatched":
		return &r.Dispatched
	case "connect":
		return &r.Connect
	case "sent":
		return &r.Sent
	case "headers":
		return &r.Headers
	case "first_event":
		return &r.FirstEvent
	case "done":
		return &r.Done
	case "first_answer":
		return &r.FirstAnswer
	case "image_bytes":
		return &r.ImageBytes
	case "audio_bytes":
		return &r.AudioBytes
	case "audio_ms":
		return &r.AudioMS
	case "tool_time":
		return &r.ToolTime
	case "first_tool_call":
		return &r.FirstToolCall
	}
	return nil
}

func stringField(key []byte, r *Record) *string {
	switch string(key) {
	case "phase":
		return &r.Phase
	case "prompt_tokens_source":
		return &r.PromptTokensSource
	case "output_tokens_source":
		return &r.OutputTokensSource
	case "error_class":
		return &r.ErrorClass
	case "error":
		return &r.Error
	case "adapter":
		return &r.Adapter
	case "trace_id":
		return &r.TraceID
	case "reasoning_tokens_source":
		return &r.ReasoningTokensSource
	case "schema_error":
		return &r.SchemaError
	case "answer":
		return &r.Answer
	case "expected":
		return &r.Expected
	}
	return nil
}

// knownBit numbers the record's keys, for duplicate detection.
func knownBit(key []byte) (uint, bool) {
	for i, k := range recordKeys {
		if string(key) == k {
			return uint(i), true
		}
	}
	return 0, false
}

var recordKeys = []string{"id", "run", "phase", "shard", "scheduled", "dispatched", "connect", "sent",
	"headers", "first_event", "done", "events", "input_tokens", "max_tokens", "fixed_output",
	"prompt_tokens", "prompt_tokens_source", "output_tokens", "output_tokens_source", "status",
	"error_class", "error", "server", "session", "turn", "stage", "adapter", "trace_id",
	"reasoning_events", "first_answer", "reasoning_tokens", "reasoning_tokens_source",
	"images", "image_bytes", "audio_clips", "audio_bytes", "audio_ms",
	"task", "step", "tool_time", "first_tool_call", "tool_calls", "inputs",
	"correct", "schema_valid", "schema_error", "answer", "expected"}

// foldsToKnown reports whether key equals a field name case-insensitively but not exactly.
// Field names are lower case, so a key without upper-case letters can only match exactly.
func foldsToKnown(key []byte) bool {
	if bytes.IndexFunc(key, func(c rune) bool { return c >= 'A' && c <= 'Z' }) < 0 {
		return false
	}
	for _, k := range recordKeys {
		if bytes.EqualFold(key, []byte(k)) {
			return true
		}
	}
	return false
}

// events decodes [[t,n],...], reusing r.Events.
func (s *scanner) events(r *Record) bool {
	ev := r.Events[:0]
	ok := s.Array(func() bool {
		var e [2]int64
		if !s.Next('[') || !s.Int64(&e[0]) || !s.Next(',') || !s.Int64(&e[1]) || !s.Next(']') {
			return false
		}
		ev = append(ev, Event{T: e[0], N: int32(e[1])})
		return true
	})
	r.Events = ev
	return ok
}

// server decodes {"name": number, ...}.
func (s *scanner) server(r *Record) bool {
	m := make(map[string]float64)
	ok := s.Object(func(key []byte) bool {
		var k string
		if !scanString(key, &k) {
			return false
		}
		s.WS()
		start := s.I
		if s.I >= len(s.B) || !(s.B[s.I] == '-' || s.B[s.I] >= '0' && s.B[s.I] <= '9') || !s.Number() {
			return false
		}
		v, err := strconv.ParseFloat(string(s.B[start:s.I]), 64)
		m[k] = v
		return err == nil
	})
	r.Server = m
	return ok
}

func (s *scanner) bool(v *bool) bool {
	switch {
	case s.Null():
	case s.Literal("true"):
		*v = true
	case s.Literal("false"):
		*v = false
	default:
		return false
	}
	return true
}

// string decodes a string value (null leaves v).
func (s *scanner) string(v *string) bool {
	if s.Null() {
		return true
	}
	s.WS()
	start := s.I
	if s.I >= len(s.B) || s.B[s.I] != '"' || !s.Str() {
		return false
	}
	return scanString(s.B[start+1:s.I-1], v)
}

// scanString sets v to the string whose raw JSON contents (between the quotes, already
// validated) are raw. Plain valid UTF-8 is copied, interning the values every record
// repeats; anything with escapes or invalid UTF-8 is left to encoding/json, for its exact
// unescaping and U+FFFD replacement rules.
func scanString(raw []byte, v *string) bool {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		*v = intern(raw)
		return true
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	return json.Unmarshal(q, v) == nil
}

// interned are the strings most records carry: phases, token sources, error classes.
var interned = func() map[string]string {
	m := make(map[string]string)
	for _, s := range append([]string{PhaseWarmup, PhaseMeasure, PhaseCooldown, SourceServer, SourceEvents,
		SourceTokenizer, SourceCount, SourceRequested}, ErrorClasses...) {
		m[s] = s
	}
	return m
}()

func intern(b []byte) string {
	if s, ok := interned[string(b)]; ok { // no allocation: the compiler elides the conversion
		return s
	}
	return string(b)
}
