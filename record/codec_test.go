package record

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample(id int) *Record {
	return &Record{ID: id, Phase: PhaseMeasure, Scheduled: 10, Dispatched: 11, Sent: 20, Headers: 30, FirstEvent: 40,
		Done: 90, Events: []Event{{T: 40, N: 1}, {T: 60, N: 3}}, InputTokens: 8, MaxTokens: 4, FixedOutput: true,
		PromptTokens: 9, PromptTokensSource: SourceServer, OutputTokens: 4, OutputTokensSource: SourceServer, Status: 200,
		Server: map[string]float64{"timings.predicted_ms": 1.5}}
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	h := &Header{Version: "x", Command: []string{"servebench", "run"}, Start: time.Unix(1700000000, 5).UTC(),
		Target: Target{URL: "http://127.0.0.1:1", API: "openai-chat", Model: "m", Simulated: true}}
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	want := []*Record{sample(0), sample(1), {ID: 2, Phase: PhaseWarmup, ErrorClass: ErrHTTP5xx, Error: "boom", Status: 503}}
	for _, r := range want {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if !strings.Contains(buf.String(), `"events":[[40,1],[60,3]]`) {
		t.Errorf("events not in compact pair form:\n%s", buf.String())
	}
	rd, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := rd.Header(); got.Schema != SchemaVersion || !got.Start.Equal(h.Start) || got.Target != h.Target {
		t.Errorf("header %+v", got)
	}
	var rec Record
	for i, w := range want {
		if err := rd.Read(&rec); err != nil {
			t.Fatal(err)
		}
		if w.Events == nil {
			w.Events = []Event{}
		}
		if !reflect.DeepEqual(&rec, w) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, rec, *w)
		}
	}
	if err := rd.Read(&rec); err != io.EOF {
		t.Errorf("end: %v", err)
	}
}

func TestTruncatedLastLine(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteHeader(&Header{})
	w.Write(sample(0))
	w.Write(sample(1))
	w.Flush()
	cut := buf.Bytes()[:buf.Len()-25] // an interrupted write
	rd, err := NewReader(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := rd.Read(&rec); err != nil || rec.ID != 0 {
		t.Fatalf("first record: %v", err)
	}
	err = rd.Read(&rec)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 3 {
		t.Fatalf("cut line: %v, want a LineError on line 3", err)
	}
	if err := rd.Read(&rec); err != io.EOF {
		t.Fatalf("after the cut line: %v", err)
	}
}

func TestNotARecordsFile(t *testing.T) {
	for _, in := range []string{"", "{}\n", "hello\n", `{"id":1,"phase":"measure"}` + "\n"} {
		if _, err := NewReader(strings.NewReader(in)); !errors.Is(err, ErrNoHeader) {
			t.Errorf("%q: %v", in, err)
		}
	}
	if _, err := NewReader(strings.NewReader(`{"servebench_header":{"schema":99}}` + "\n")); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("future schema: %v", err)
	}
}

func TestLongLine(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteHeader(&Header{})
	r := sample(0)
	r.Error = strings.Repeat("x", 1<<20)
	w.Write(r)
	w.Flush()
	rd, _ := NewReader(&buf)
	var rec Record
	if err := rd.Read(&rec); err != nil || len(rec.Error) != 1<<20 {
		t.Fatalf("a 1 MiB line: %v", err)
	}
}

func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteHeader(&Header{Version: "x"})
	w.Write(sample(0))
	w.Flush()
	f.Add(buf.Bytes())
	f.Add([]byte(`{"servebench_header":{}}` + "\n" + `{"phase":"measure","events":[[1]]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := NewReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		var rec Record
		for i := 0; i < 1000; i++ {
			err := rd.Read(&rec)
			if err == io.EOF {
				return
			}
			var re *RunError
			if errors.As(err, &re) { // not one run: the reading ends there
				if again := rd.Read(&rec); again != err {
					t.Fatalf("Read after %v = %v", err, again)
				}
				return
			}
		}
	})
}

// BenchmarkWrite measures encoding one record of 128 events.
func BenchmarkWrite(b *testing.B) {
	r := sample(0)
	r.Events = make([]Event, 128)
	for i := range r.Events {
		r.Events[i] = Event{T: int64(i) * 20_000_000, N: 1}
	}
	w := NewWriter(io.Discard)
	b.ReportAllocs()
	for b.Loop() {
		w.Write(r)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*128), "ns/event")
}

// BenchmarkRead measures decoding one record of 128 events.
func BenchmarkRead(b *testing.B) {
	r := sample(0)
	r.Events = make([]Event, 128)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteHeader(&Header{})
	for range 1000 {
		w.Write(r)
	}
	w.Flush()
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var rec Record
	for b.Loop() {
		rd, _ := NewReader(bytes.NewReader(data))
		for rd.Read(&rec) == nil {
		}
	}
}

// TestWriterRedacts: a secret anywhere in any line (header, record, telemetry, run end) is
// replaced, in its raw and its JSON-escaped form, and the file stays readable.
func TestWriterRedacts(t *testing.T) {
	const key, amp, quoted = "sk-live-123", "a&b<c>", `q"é`
	var b bytes.Buffer
	w := NewWriter(&b)
	w.Redact("REDACTED", key, amp, quoted, "")
	_ = w.WriteHeader(&Header{Target: Target{Model: "m-" + key, URL: "http://h/" + amp, API: "api-" + quoted}})
	_ = w.Write(&Record{ID: 1, Phase: PhaseMeasure, Error: "server said " + key})
	v := 1.0
	_ = w.WriteTelemetry(&Telemetry{Source: "s", OK: true, Series: []Series{{Name: "x", Type: TypeGauge, Labels: map[string]string{"k": key}, Value: &v}}})
	_ = w.WriteRunEnd(&RunEnd{})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, sec := range []string{key, amp, `a\u0026b`, `q\"é`, "é"} {
		if strings.Contains(out, sec) {
			t.Errorf("%q written:\n%s", sec, out)
		}
	}
	rd, err := NewReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	if m := rd.Header().Target.Model; m != "m-REDACTED" {
		t.Errorf("model %q, want m-REDACTED", m)
	}
	var r Record
	if err := rd.Read(&r); err != nil || r.Error != "server said REDACTED" {
		t.Errorf("record %+v (%v)", r, err)
	}
}

// TestRedactedHeader: the header in memory is cleaned as its line is (a quoted secret too),
// keeping Start; a header without a secret in it is returned as it is.
func TestRedactedHeader(t *testing.T) {
	const sec = `k"ey`
	start := time.Now()
	h := &Header{Start: start, Target: Target{Model: "m-" + sec}, Ends: []RunEnd{{}}}
	got, err := RedactedHeader(h, "REDACTED", sec)
	if err != nil || got == h || got.Target.Model != "m-REDACTED" || !got.Start.Equal(start) || len(got.Ends) != 1 {
		t.Errorf("RedactedHeader = %+v, %v", got, err)
	}
	if same, _ := RedactedHeader(got, "REDACTED", sec); same != got {
		t.Error("a clean header was copied")
	}
}
