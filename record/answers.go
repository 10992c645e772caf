package record

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// MaxAnswerBytes bounds Record.Answer: the text of a wrong or schema-invalid answer is kept
// so that a report can show a few of them, not so that a records file holds every output.
const MaxAnswerBytes = 240

// ClipAnswer returns s cut to at most MaxAnswerBytes on a rune boundary, with "…" when cut.
func ClipAnswer(s string) string {
	if len(s) <= MaxAnswerBytes {
		return s
	}
	cut := MaxAnswerBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Judged reports whether the request's answer was scored against an answer key or checked
// against a response format.
func (r *Record) Judged() bool { return r.Correct != nil || r.SchemaValid != nil }

// Right reports whether a judged answer passed every check it had: correct when scored, and
// valid when checked against a schema. An answer that was never judged is not right.
func (r *Record) Right() bool {
	if !r.Judged() {
		return false
	}
	return (r.Correct == nil || *r.Correct) && (r.SchemaValid == nil || *r.SchemaValid)
}

// appendAnswers appends the answer fields of r, each left out when unset (omitempty).
func appendAnswers(b []byte, r *Record, scratch *bytes.Buffer, enc *json.Encoder) []byte {
	for _, f := range [...]struct {
		name string
		v    *bool
	}{{`,"correct":`, r.Correct}, {`,"schema_valid":`, r.SchemaValid}} {
		if f.v != nil {
			b = strconv.AppendBool(append(b, f.name...), *f.v)
		}
	}
	b = appendStringField(b, `,"schema_error":`, r.SchemaError, scratch, enc)
	b = appendStringField(b, `,"answer":`, r.Answer, scratch, enc)
	return appendStringField(b, `,"expected":`, r.Expected, scratch, enc)
}

// answerFlag decodes "correct" or "schema_valid": true, false or null (left unset).
func (s *scanner) answerFlag(key []byte, r *Record) bool {
	if s.Null() {
		return true
	}
	var v bool
	if !s.bool(&v) {
		return false
	}
	if string(key) == "correct" {
		r.Correct = &v
	} else {
		r.SchemaValid = &v
	}
	return true
}
