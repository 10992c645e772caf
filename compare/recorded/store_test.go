package recorded

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"servebench/record"
)

// packInput is a records file with what the stored form must keep: times missing or out of
// order, gaps too wide for two bytes, events of other than one token, lines other than
// records. testdata/format2.rec.xz is this file packed in format 2 (stamps to the µs).
const packInput = `{"servebench_header":{"schema":1,"start":"2026-12-07T03:24:04Z"}}
{"id":0,"phase":"warmup","scheduled":396765,"dispatched":461235,"connect":86051,"sent":502092,"headers":2422805,"first_event":18607195,"done":1055121720,"events":[[18607195,1],[237402789,1],[237402789,1],[233316588,3],[9233316588,1]],"input_tokens":512,"max_tokens":128,"fixed_output":true,"prompt_tokens":512,"prompt_tokens_source":"server","output_tokens":6,"output_tokens_source":"server","status":200}
{"id":1,"phase":"measure","scheduled":100,"dispatched":99,"events":[[1000499,0],[2000500,1]],"status":200}
{"id":2,"run":1,"phase":"measure","scheduled":2000,"dispatched":2100,"status":500,"error_class":"http_5xx","error":"boom"}
{"servebench_run_end":{"run":0,"label":"repeat 1/2","stop":"requests"}}
{"servebench_telemetry":{"v":1,"run":1,"t":16008368632,"series":[]}}
`

// wantRead is packInput's header and records with each event's stamp rounded to unit ns.
func wantRead(t *testing.T, unit int64) (*record.Header, []record.Record) {
	t.Helper()
	h, recs, err := record.ReadAll(strings.NewReader(packInput))
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		for k := range recs[i].Events {
			recs[i].Events[k].T = (recs[i].Events[k].T + unit/2) / unit * unit
		}
	}
	return h, recs
}

// readAll reads a stored file whole.
func readAll(t *testing.T, r io.Reader) (*record.Header, []record.Record) {
	t.Helper()
	x, err := NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	var got []record.Record
	for {
		var rec record.Record
		err := x.Read(&rec)
		if errors.Is(err, io.EOF) {
			return x.Header(), got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec)
	}
}

func checkRead(t *testing.T, what string, r io.Reader, unit int64) {
	t.Helper()
	wantH, want := wantRead(t, unit)
	h, got := readAll(t, r)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s reads back:\n%+v\nwant:\n%+v", what, got, want)
	}
	if !reflect.DeepEqual(h, wantH) {
		t.Errorf("%s's header:\n%+v\nwant:\n%+v", what, h, wantH)
	}
}

func needXZ(t *testing.T) {
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("packing needs the xz command")
	}
}

// A stored file reads back as the records file it was packed from, each event's stamp
// rounded to 10 µs and everything else as it was.
func TestPackRead(t *testing.T) {
	needXZ(t)
	var z bytes.Buffer
	if err := Pack(&z, strings.NewReader(packInput)); err != nil {
		t.Fatal(err)
	}
	checkRead(t, "a packed file", &z, 10_000)
}

// A file of format 2 reads back to the microsecond; Repack rewrites it as Pack writes the
// records file now, and again the same.
func TestFormat2(t *testing.T) {
	old, err := os.ReadFile("testdata/format2.rec.xz")
	if err != nil {
		t.Fatal(err)
	}
	checkRead(t, "format 2", bytes.NewReader(old), 1000)
	needXZ(t)
	var re, again, packed bytes.Buffer
	if err := Repack(&re, bytes.NewReader(old)); err != nil {
		t.Fatal(err)
	}
	if err := Repack(&again, bytes.NewReader(re.Bytes())); err != nil {
		t.Fatal(err)
	}
	if err := Pack(&packed, strings.NewReader(packInput)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(re.Bytes(), packed.Bytes()) || !bytes.Equal(again.Bytes(), packed.Bytes()) {
		t.Errorf("format 2 repacked: %d and %d bytes, not the %d Pack writes", re.Len(), again.Len(), packed.Len())
	}
	checkRead(t, "format 2 repacked", &re, 10_000)
}
