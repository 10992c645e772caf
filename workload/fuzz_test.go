package workload

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The fuzz targets check that no input panics a parser, and that every error is one line.

func checkOneLine(t *testing.T, err error) {
	if err != nil && strings.ContainsAny(err.Error(), "\r\n") {
		t.Fatalf("error is not one line: %q", err)
	}
	// a type error names JSON's types, never a Go type
	for _, goWords := range []string{"Go struct", "Go value", "struct {", "of type "} {
		if err != nil && strings.Contains(err.Error(), goWords) {
			t.Fatalf("error names a Go type: %q", err)
		}
	}
}

// checkBOM checks that a leading UTF-8 BOM changes nothing: read fails on data with it
// exactly when it fails on data without.
func checkBOM(t *testing.T, data []byte, read func([]byte) error) {
	if bytes.HasPrefix(data, utf8BOM) {
		return
	}
	plain, withBOM := read(data), read(append(append([]byte{}, utf8BOM...), data...))
	if (plain == nil) != (withBOM == nil) {
		t.Fatalf("a BOM changes the outcome: without %v, with %v", plain, withBOM)
	}
}

func FuzzShareGPT(f *testing.F) {
	f.Add([]byte(`[{"id":"a","conversations":[{"from":"human","value":"a b c d e"},{"from":"gpt","value":"a b c d e"}]}]`))
	f.Add([]byte(`[{"conversations":[{"from":"system","value":"x"},{"from":"human","value":"a\nb"}]},{}]`))
	f.Add([]byte(`[{"conversations":[{"from":"human","value":3}]`))
	f.Add([]byte("\xEF\xBB\xBF[{\"conversations\":\"x\"}]"))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := ShareGPT{Count: 1, MinPromptTokens: 1, MinOutputTokens: 1, MaxRecordBytes: 1 << 10}
		_, _, err := s.Read(context.Background(), bytes.NewReader(data), "f.json", wordCount)
		checkOneLine(t, err)
		checkBOM(t, data, func(b []byte) error {
			_, _, err := s.Read(context.Background(), bytes.NewReader(b), "f.json", wordCount)
			return err
		})
		s.MaxTurns = 2
		_, _, err = s.ReadSessions(context.Background(), bytes.NewReader(data), "f.json", wordCount)
		checkOneLine(t, err)
	})
}

func FuzzMooncake(f *testing.F) {
	f.Add([]byte(mooncakeSample))
	f.Add([]byte(`{"timestamp": 1e308, "input_length": 2, "output_length": 1, "hash_ids": [-1, -1]}`))
	f.Add([]byte("{\"timestamp\": 0, \"input_length\": 2, \"output_length\": 1}\n{\"timestamp\": 1e13, \"input_length\": 2, \"output_length\": 1}"))
	f.Add([]byte("\xEF\xBB\xBF{\"timestamp\": \"x\"}\n \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := Mooncake{BlockTokens: 4, MaxRecordBytes: 1 << 10}
		rows, err := m.parse(bytes.NewReader(data), "m.jsonl", 4)
		checkOneLine(t, err)
		checkBOM(t, data, func(b []byte) error {
			_, err := m.parse(bytes.NewReader(b), "m.jsonl", 4)
			return err
		})
		for i := range rows {
			if d := rows[i].atMS - rows[0].atMS; d < 0 || d > maxTraceSpanMS {
				t.Fatalf("row %d: %v ms after the first passed the checks", i, d)
			}
		}
		if err != nil || tooBig(rows) {
			return // lengths up to maxTraceTokens are legal, but too slow to build here
		}
		tr, err := m.Read(context.Background(), bytes.NewReader(data), "m.jsonl", nil)
		checkOneLine(t, err)
		if err == nil {
			if got := RepeatedShare(tr.Plain(), Repeats(tr.Plain())); got < 0 || got > 1 {
				t.Fatalf("repeated share %v", got)
			}
		}
	})
}

func FuzzBurstGPT(f *testing.F) {
	f.Add([]byte(burstSample))
	f.Add([]byte("Timestamp,Request tokens,Response tokens\n\"1\",2,\"3\"\"\"\n"))
	f.Add([]byte("\xEF\xBB\xBFTimestamp,Request tokens,Response tokens\n0,1,1\n1e300,1,1\n"))
	f.Add([]byte("Timestamp,Request tokens,Response tokens\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := BurstGPT{MaxRecordBytes: 1 << 10}
		rows, _, err := b.parse(bytes.NewReader(data), "b.csv")
		checkOneLine(t, err)
		checkBOM(t, data, func(d []byte) error {
			_, _, err := b.parse(bytes.NewReader(d), "b.csv")
			return err
		})
		if err != nil || tooBig(rows) {
			return
		}
		_, err = b.Read(context.Background(), bytes.NewReader(data), "b.csv", nil)
		checkOneLine(t, err)
	})
}

func FuzzPrompts(f *testing.F) {
	f.Add([]byte(`{"prompt":"a","output_tokens":5}` + "\n" + `{"messages":[{"role":"user","content":"b"}]}`))
	f.Add([]byte("\xEF\xBB\xBF{\"prompt\": 3, \"output_tokens\": 1e30}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Read(bytes.NewReader(data), "p.jsonl", 1)
		checkOneLine(t, err)
		checkBOM(t, data, func(b []byte) error {
			_, err := Read(bytes.NewReader(b), "p.jsonl", 1)
			return err
		})
	})
}

// tooBig reports whether building rows' prompts would take the fuzzer too long.
func tooBig(rows []traceRow) bool {
	total := 0
	for _, r := range rows {
		total += r.in
	}
	return total > 1<<14
}
