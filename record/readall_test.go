package record

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// ReadAll returns the header with the run-end lines gathered into it and every record as its
// own value (no two share Events); on a cut last line, the records before it and the
// LineError; on no header, ErrNoHeader.
func TestReadAll(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteHeader(&Header{Version: "x"})
	for i := range 3 {
		w.Write(sample(i))
	}
	_ = w.WriteRunEnd(&RunEnd{Run: 0, Stop: "requests"})
	w.Flush()
	h, recs, err := ReadAll(bytes.NewReader(buf.Bytes()))
	if err != nil || h == nil || h.Version != "x" || len(h.Ends) != 1 || len(recs) != 3 {
		t.Fatalf("header %+v, %d records, err %v; want the header with 1 run end, 3 records, no error", h, len(recs), err)
	}
	for i, r := range recs {
		if r.ID != sample(i).ID || len(r.Events) != len(sample(i).Events) {
			t.Errorf("record %d: id %d, %d events; want %d, %d", i, r.ID, len(r.Events), sample(i).ID, len(sample(i).Events))
		}
	}
	if len(recs[0].Events) > 0 && len(recs[1].Events) > 0 && &recs[0].Events[0] == &recs[1].Events[0] {
		t.Error("records 0 and 1 share their Events")
	}

	cut := buf.Bytes()[:bytes.LastIndex(buf.Bytes(), []byte(`{"servebench_run_end"`))-25]
	h, recs, err = ReadAll(bytes.NewReader(cut))
	var le *LineError
	if h == nil || len(recs) != 2 || !errors.As(err, &le) || le.Line != 4 {
		t.Errorf("cut file: header %v, %d records, err %v; want the header, 2 records, a LineError on line 4", h != nil, len(recs), err)
	}

	if h, recs, err := ReadAll(strings.NewReader("hello\n")); h != nil || recs != nil || !errors.Is(err, ErrNoHeader) {
		t.Errorf("no header: %v, %d records, %v; want nil, 0, ErrNoHeader", h, len(recs), err)
	}
}
