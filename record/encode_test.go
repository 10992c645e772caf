package record

import (
	"bytes"
	"encoding/json"
	"testing"
)

// viaJSON is what encoding/json writes for r: the oracle the hand-written encoder must match.
func viaJSON(t testing.TB, r *Record) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeFast(t testing.TB, r *Record) []byte {
	var scratch bytes.Buffer
	enc := json.NewEncoder(&scratch)
	enc.SetEscapeHTML(false)
	b, err := appendRecord(nil, r, &scratch, enc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	for _, r := range []*Record{
		sample(0),
		{Phase: PhaseWarmup},
		{Phase: PhaseMeasure, Session: 2, Turn: 1, Adapter: "sql-lora \"x\" é"}, // after turn, as the struct orders it
		{ID: 3, Run: 2, Shard: 1, Phase: PhaseMeasure, Scheduled: 5, Dispatched: 6, Connect: 7, ErrorClass: ErrHTTP5xx, Error: "bad \"gateway\"\n<html> é \u2028 \x01", Status: 502},
		{Phase: "measure", Events: []Event{{T: 5, N: 2}, {T: 9, N: 1}}, OutputTokens: 3, ReasoningEvents: 1, FirstAnswer: 9, ReasoningTokens: 2, ReasoningTokensSource: SourceServer},
		{Phase: "measure", Server: map[string]float64{"b": 1e-7, "a": 123456789012345678901234.0, "c": 0.5}, Events: []Event{{T: -1, N: 0}}},
	} {
		if got, want := encodeFast(t, r), viaJSON(t, r); !bytes.Equal(got, want) {
			t.Errorf("encode differs:\n got %s\nwant %s", got, want)
		}
	}
}

func FuzzEncodeRecord(f *testing.F) {
	f.Add(1, 0, "measure", int64(5), int64(7), int32(2), "", "server", 3, "")
	f.Add(0, 4, "warmup", int64(-1), int64(0), int32(0), "timeout", "", 0, "boom \xff \"x\"")
	f.Fuzz(func(t *testing.T, id, run int, phase string, at, done int64, n int32, class, src string, out int, msg string) {
		r := &Record{ID: id, Run: run, Phase: phase, Scheduled: at, Done: done, Events: []Event{{T: at, N: n}, {T: done, N: n}},
			ErrorClass: class, OutputTokensSource: src, OutputTokens: out, Error: msg}
		if got, want := encodeFast(t, r), viaJSON(t, r); !bytes.Equal(got, want) {
			t.Fatalf("encode differs:\n got %s\nwant %s", got, want)
		}
	})
}
