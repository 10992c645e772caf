package record

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// appendRecord appends r as one JSON line, byte for byte what encoding/json writes for a
// Record (same field order and omitempty rules, no HTML escaping), without reflection: the
// records writer shares the CPU with the requests it times, and encoding/json cost about
// 176 ns per event there. Strings that need escaping and the Server map take encoding/json's
// own path (scratch), so the rare cases stay exactly right; FuzzEncodeRecord checks the two
// agree.
func appendRecord(b []byte, r *Record, scratch *bytes.Buffer, enc *json.Encoder) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(r.ID), 10)
	b = appendIntField(b, `,"run":`, int64(r.Run), true)
	b = append(b, `,"phase":`...)
	b = appendString(b, r.Phase, scratch, enc)
	b = appendIntField(b, `,"shard":`, int64(r.Shard), true)
	b = appendIntField(b, `,"session":`, int64(r.Session), true)
	b = appendIntField(b, `,"turn":`, int64(r.Turn), true)
	b = appendIntField(b, `,"stage":`, int64(r.Stage), true)
	b = appendStringField(b, `,"adapter":`, r.Adapter, scratch, enc)
	b = appendStringField(b, `,"trace_id":`, r.TraceID, scratch, enc)
	b = appendIntField(b, `,"scheduled":`, r.Scheduled, false)
	b = appendIntField(b, `,"dispatched":`, r.Dispatched, false)
	b = appendIntField(b, `,"connect":`, r.Connect, true)
	b = appendIntField(b, `,"sent":`, r.Sent, true)
	b = appendIntField(b, `,"headers":`, r.Headers, true)
	b = appendIntField(b, `,"first_event":`, r.FirstEvent, true)
	b = appendIntField(b, `,"done":`, r.Done, true)
	if len(r.Events) > 0 {
		b = append(b, `,"events":[`...)
		for i, e := range r.Events {
			if i > 0 {
				b = append(b, ',')
			}
			b = e.appendJSON(b)
		}
		b = append(b, ']')
	}
	b = appendIntField(b, `,"input_tokens":`, int64(r.InputTokens), true)
	b = appendIntField(b, `,"max_tokens":`, int64(r.MaxTokens), true)
	if r.FixedOutput {
		b = append(b, `,"fixed_output":true`...)
	}
	b = appendIntField(b, `,"prompt_tokens":`, int64(r.PromptTokens), false)
	b = appendStringField(b, `,"prompt_tokens_source":`, r.PromptTokensSource, scratch, enc)
	b = appendIntField(b, `,"output_tokens":`, int64(r.OutputTokens), false)
	b = appendStringField(b, `,"output_tokens_source":`, r.OutputTokensSource, scratch, enc)
	b = appendIntField(b, `,"reasoning_events":`, int64(r.ReasoningEvents), true)
	b = appendIntField(b, `,"first_answer":`, r.FirstAnswer, true)
	b = appendIntField(b, `,"reasoning_tokens":`, int64(r.ReasoningTokens), true)
	b = appendStringField(b, `,"reasoning_tokens_source":`, r.ReasoningTokensSource, scratch, enc)
	b = appendMedia(b, r)
	b = appendAnswers(b, r, scratch, enc) // answers.go
	b = appendIntField(b, `,"status":`, int64(r.Status), true)
	b = appendStringField(b, `,"error_class":`, r.ErrorClass, scratch, enc)
	b = appendStringField(b, `,"error":`, r.Error, scratch, enc)
	b, err := appendTools(b, r, scratch, enc) // tools.go
	if err != nil {
		return b, err
	}
	if len(r.Server) > 0 {
		scratch.Reset()
		if err := enc.Encode(r.Server); err != nil {
			return b, err
		}
		b = append(b, `,"server":`...)
		b = append(b, bytes.TrimRight(scratch.Bytes(), "\n")...)
	}
	return append(b, "}\n"...), nil
}

// appendIntField appends name and v, leaving both out when omitEmpty and v is 0.
func appendIntField(b []byte, name string, v int64, omitEmpty bool) []byte {
	if omitEmpty && v == 0 {
		return b
	}
	b = append(b, name...)
	return strconv.AppendInt(b, v, 10)
}

// appendStringField appends name and s, leaving both out when s is empty (omitempty).
func appendStringField(b []byte, name, s string, scratch *bytes.Buffer, enc *json.Encoder) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, name...), s, scratch, enc)
}

// appendString appends s as a JSON string. Plain printable ASCII is copied; anything else
// (quotes, backslashes, control characters, non-ASCII, which encoding/json may escape or
// repair) is encoded by encoding/json.
func appendString(b []byte, s string, scratch *bytes.Buffer, enc *json.Encoder) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			scratch.Reset()
			_ = enc.Encode(s) // a string always encodes
			return append(b, bytes.TrimRight(scratch.Bytes(), "\n")...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
