package record

import (
	"bytes"
	"testing"
)

// TestMediaFieldsRoundTrip: the media fields encode as encoding/json would and read back.
func TestMediaFieldsRoundTrip(t *testing.T) {
	r := &Record{ID: 1, Phase: PhaseMeasure, PromptTokens: 3000, PromptTokensSource: SourceServer,
		Images: 2, ImageBytes: 1_987_654, AudioClips: 1, AudioBytes: 160_044, AudioMS: 5000, Status: 200}
	got, want := encodeFast(t, r), viaJSON(t, r)
	if !bytes.Equal(got, want) {
		t.Fatalf("encode differs:\n got %s\nwant %s", got, want)
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
	if err := rd.Read(back); err != nil {
		t.Fatal(err)
	}
	if back.Images != 2 || back.ImageBytes != 1_987_654 || back.AudioClips != 1 || back.AudioBytes != 160_044 || back.AudioMS != 5000 {
		t.Errorf("read back %+v", back)
	}
}
