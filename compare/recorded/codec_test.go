package recorded

import (
	"bytes"
	"strings"
	"testing"
)

// A stored file expands to the records file with each event's stamp rounded to the
// microsecond and every other byte as it was, one-token events and others alike.
func TestCompactExpand(t *testing.T) {
	in := `{"servebench_header":{"schema":1}}
{"id":0,"phase":"measure","sent":5,"events":[[15742370,1],[227202789,1],[227202789,1],[233316588,1]],"output_tokens":4}
{"id":1,"phase":"measure","events":[[1000499,2],[2000500,1]],"status":200}
{"id":2,"phase":"measure","status":500,"error_class":"http_5xx"}
{"servebench_telemetry":{"v":1,"t":16008368632,"series":[]}}
`
	want := `{"servebench_header":{"schema":1}}
{"id":0,"phase":"measure","sent":5,"events":[[15742000,1],[227203000,1],[227203000,1],[233317000,1]],"output_tokens":4}
{"id":1,"phase":"measure","events":[[1000000,2],[2001000,1]],"status":200}
{"id":2,"phase":"measure","status":500,"error_class":"http_5xx"}
{"servebench_telemetry":{"v":1,"t":16008368632,"series":[]}}
`
	var z bytes.Buffer
	if err := Compact(&z, strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	got, err := Expand(&z)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("expanded:\n%s\nwant:\n%s", got, want)
	}
	// a stored file of events already on the microsecond expands to the very bytes
	z.Reset()
	if err := Compact(&z, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	if again, err := Expand(&z); err != nil || string(again) != want {
		t.Errorf("second round trip: %v\n%s", err, again)
	}
}
