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
}

func FuzzShareGPT(f *testing.F) {
	f.Add([]byte(`[{"id":"a","conversations":[{"from":"human","value":"a b c d e"},{"from":"gpt","value":"a b c d e"}]}]`))
	f.Add([]byte(`[{"conversations":[{"from":"system","value":"x"},{"from":"human","value":"a\nb"}]},{}]`))
	f.Add([]byte(`[{"conversations":[{"from":"human","value":3}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := ShareGPT{Count: 1, MinPromptTokens: 1, MinOutputTokens: 1, MaxRecordBytes: 1 << 10}
		_, _, err := s.Read(context.Background(), bytes.NewReader(data), "f.json", wordCount)
		checkOneLine(t, err)
		s.MaxTurns = 2
		_, _, err = s.ReadSessions(context.Background(), bytes.NewReader(data), "f.json", wordCount)
		checkOneLine(t, err)
	})
}

func FuzzMooncake(f *testing.F) {
	f.Add([]byte(mooncakeSample))
	f.Add([]byte(`{"timestamp": 1e308, "input_length": 2, "output_length": 1, "hash_ids": [-1, -1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := Mooncake{BlockTokens: 4, MaxRecordBytes: 1 << 10}
		rows, err := m.parse(bytes.NewReader(data), "m.jsonl", 4)
		checkOneLine(t, err)
		if err != nil || tooBig(rows) {
			return // lengths up to maxTraceTokens are legal, but too slow to build here
		}
		tr, err := m.Read(context.Background(), bytes.NewReader(data), "m.jsonl", nil)
		checkOneLine(t, err)
		if err == nil && (tr.ReusableShare < 0 || tr.ReusableShare > 1) {
			t.Fatalf("ReusableShare %v", tr.ReusableShare)
		}
	})
}

func FuzzBurstGPT(f *testing.F) {
	f.Add([]byte(burstSample))
	f.Add([]byte("Timestamp,Request tokens,Response tokens\n\"1\",2,\"3\"\"\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := BurstGPT{MaxRecordBytes: 1 << 10}
		rows, _, err := b.parse(bytes.NewReader(data), "b.csv")
		checkOneLine(t, err)
		if err != nil || tooBig(rows) {
			return
		}
		_, err = b.Read(context.Background(), bytes.NewReader(data), "b.csv", nil)
		checkOneLine(t, err)
	})
}

func FuzzPrompts(f *testing.F) {
	f.Add([]byte(`{"prompt":"a","output_tokens":5}` + "\n" + `{"messages":[{"role":"user","content":"b"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Read(bytes.NewReader(data), "p.jsonl", 1)
		checkOneLine(t, err)
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
