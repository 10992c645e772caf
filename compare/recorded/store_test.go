package recorded

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"servebench/record"
)

// A stored file reads back as the records file it was packed from, each event's stamp
// rounded to the microsecond and everything else as it was: times missing or out of order,
// gaps too wide for two bytes, events of other than one token, lines other than records.
func TestPackRead(t *testing.T) {
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("packing needs the xz command")
	}
	in := `{"servebench_header":{"schema":1,"start":"2026-12-07T03:24:04Z"}}
{"id":0,"phase":"warmup","scheduled":396765,"dispatched":461235,"connect":86051,"sent":502092,"headers":2422805,"first_event":18607195,"done":1055121720,"events":[[18607195,1],[237402789,1],[237402789,1],[233316588,3],[9233316588,1]],"input_tokens":512,"max_tokens":128,"fixed_output":true,"prompt_tokens":512,"prompt_tokens_source":"server","output_tokens":6,"output_tokens_source":"server","status":200}
{"id":1,"phase":"measure","scheduled":100,"dispatched":99,"events":[[1000499,0],[2000500,1]],"status":200}
{"id":2,"run":1,"phase":"measure","scheduled":2000,"dispatched":2100,"status":500,"error_class":"http_5xx","error":"boom"}
{"servebench_run_end":{"run":0,"label":"repeat 1/2","stop":"requests"}}
{"servebench_telemetry":{"v":1,"run":1,"t":16008368632,"series":[]}}
`
	var z bytes.Buffer
	if err := Pack(&z, strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	wantH, want, err := record.ReadAll(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		for k := range want[i].Events {
			want[i].Events[k].T = (want[i].Events[k].T + 500) / 1000 * 1000
		}
	}
	x, err := NewReader(&z)
	if err != nil {
		t.Fatal(err)
	}
	var got []record.Record
	for {
		var rec record.Record
		err := x.Read(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back:\n%+v\nwant:\n%+v", got, want)
	}
	if !reflect.DeepEqual(x.Header(), wantH) {
		t.Errorf("header:\n%+v\nwant:\n%+v", x.Header(), wantH)
	}
}
