package record

import (
	"bytes"
	"testing"
)

// TestInputsRoundTrip: a pooling request's batch size encodes as encoding/json would, is
// left out when 0, and reads back.
func TestInputsRoundTrip(t *testing.T) {
	r := &Record{ID: 1, Phase: PhaseMeasure, Sent: 5, Done: 9, PromptTokens: 300, PromptTokensSource: SourceServer, Inputs: 16, Status: 200}
	got, want := encodeFast(t, r), viaJSON(t, r)
	if !bytes.Equal(got, want) || !bytes.Contains(got, []byte(`"inputs":16`)) {
		t.Fatalf("encode differs:\n got %s\nwant %s", got, want)
	}
	if b := encodeFast(t, &Record{ID: 2, Phase: PhaseMeasure}); bytes.Contains(b, []byte("inputs")) {
		t.Errorf("a record without inputs writes them: %s", b)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteHeader(&Header{Schema: SchemaVersion}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	back := &Record{}
	if err := rd.Read(back); err != nil || back.Inputs != 16 {
		t.Errorf("read back %+v, %v", back, err)
	}
}
