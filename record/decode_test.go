package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// decodeSeeds are record lines: the Writer's own first, then lines the fast path must
// either decode exactly as json.Unmarshal does or hand over to it.
var decodeSeeds = []string{
	`{"id":1,"phase":"measure","scheduled":10,"dispatched":11,"sent":20,"events":[[40,1],[60,3]],"fixed_output":true,"prompt_tokens":9,"output_tokens":4,"server":{"timings.predicted_ms":1.5e0}}`,
	`{"id":2,"run":3,"phase":"warmup","prompt_tokens":0,"output_tokens":0,"status":503,"error_class":"http_5xx","error":"boom \"quoted\" \u00e9 \ud83d\ude00"}`,
	` {"id":-0,"phase":"x","events":[],"server":{},"fixed_output":false,"unknown":[1,{"a":null}],"error":null} `,
	`{"ID":1,"phase":"m"}`, `{"id":1.0,"phase":"m"}`, `{"id":1,"id":2,"phase":"m"}`, `{"events":[[1,2,3]],"phase":"m"}`,
	`{"events":[[1]],"phase":"m"}`, `{"events":null,"phase":"m"}`, `{"server":{"a":1e400},"phase":"m"}`,
	`{"phase":"\xff\xfe"}`, `{"phase":"a\u0000b"}`, `{"phase":"\ud800"}`, `{"id":99999999999999999999}`,
	`{"id":4,"phase":"measure","session":1,"turn":2,"adapter":"sql-lora","prompt_tokens":1,"output_tokens":1}`,
	`{"events":[[1,2147483648]],"phase":"m"}`, `{"fixed_output":1}`, `{"phase":"m"} x`, `null`, `{"ph\u0061se":"m"}`,
}

func TestFastRecordTaken(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write(sample(1))
	w.Write(&Record{ID: 2, Phase: PhaseWarmup, ErrorClass: ErrHTTP5xx, Error: "boom ü", Status: 503})
	w.Flush()
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var r Record
		if !decodeFast(line, &r) {
			t.Errorf("fast path refused the Writer's own line %s", line)
		}
	}
}

// FuzzFastRecord checks the fast record decoder against json.Unmarshal, the oracle: whenever
// the fast path accepts a line, json.Unmarshal accepts it and decodes the same record.
func FuzzFastRecord(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast, slow Record
		if !decodeFast(line, &fast) {
			return
		}
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatalf("fast path accepted what json.Unmarshal rejects (%v): %q", err, line)
		}
		if len(fast.Events) == 0 && len(slow.Events) == 0 {
			fast.Events, slow.Events = nil, nil
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast %s\njson %s\nfor %q", dump(fast), dump(slow), line)
		}
	})
}

func dump(r Record) string { return fmt.Sprintf("%+v", r) }

// benchLines is 1,000 records of 128 events with realistic timestamps (ns since t0, 20 ms
// apart), as a run writes them.
func benchLines() []byte {
	r := sample(0)
	r.Events = make([]Event, 128)
	for i := range r.Events {
		r.Events[i] = Event{T: 1_234_567_890 + int64(i)*20_012_345, N: 1}
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteHeader(&Header{})
	for i := range 1000 {
		r.ID = i
		w.Write(r)
	}
	w.Flush()
	return buf.Bytes()
}

// BenchmarkReadRealistic is Reader.Read (the fast path) on benchLines; compare it with
// BenchmarkReadJSONUnmarshal, the same lines through json.Unmarshal, in one run.
func BenchmarkReadRealistic(b *testing.B) {
	data := benchLines()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var rec Record
	for b.Loop() {
		rd, _ := NewReader(bytes.NewReader(data))
		for rd.Read(&rec) == nil {
		}
	}
}

// BenchmarkReadJSONUnmarshal decodes benchLines with json.Unmarshal, as Read did before.
func BenchmarkReadJSONUnmarshal(b *testing.B) {
	data := benchLines()
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))[1:]
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var rec Record
	for b.Loop() {
		for _, l := range lines {
			rec = Record{Events: rec.Events[:0]}
			if err := json.Unmarshal(l, &rec); err != nil {
				b.Fatal(err)
			}
		}
	}
}
