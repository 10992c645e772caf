package report

import (
	"bytes"
	"iter"
	"testing"
	"time"

	"servebench/record"
)

// stagedInput is the base fixture as a run of three closed-loop stages: its requests in
// thirds by ID, stage 1 (index 0) first.
func stagedInput(t *testing.T) Input {
	in := fileInput(t, "base.jsonl")
	h := *in.Header
	st := func(u int) record.Stage { return record.Stage{Users: u, Duration: int64(time.Second)} }
	h.Load = &record.Load{Stages: []record.Stage{st(1), st(2), st(4)}}
	recs := in.Records
	in.Header = &h
	in.Records = func(yield func(*record.Record, error) bool) {
		for r, err := range recs {
			if r != nil {
				r.Stage = min(r.ID*3/25, 2)
			}
			if !yield(r, err) {
				return
			}
		}
	}
	var _ iter.Seq2[*record.Record, error] = in.Records
	return in
}

// TestStagesGolden: a staged run's load line and per-stage table in text, JSON and Markdown,
// and the HTML page's per-stage table.
func TestStagesGolden(t *testing.T) {
	for _, f := range []string{"text", "json", "md"} {
		t.Run(f, func(t *testing.T) {
			var b bytes.Buffer
			if err := Render(&b, f, stagedInput(t)); err != nil {
				t.Fatal(err)
			}
			golden(t, "stages."+f+".golden", b.Bytes())
		})
	}
	var b bytes.Buffer
	if err := Render(&b, "html", stagedInput(t)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte(`<h2 id="stages">Load stages</h2>`)) || bytes.Count(b.Bytes(), []byte(" × 1s</td>")) != 3 {
		t.Error("the HTML page has no per-stage table of 3 rows")
	}
}
