package report

import (
	"bytes"
	"strings"
	"testing"

	"servebench/record"
)

// mediaRecords are three completed requests with two images each (and one with a clip),
// their prompts 2738 server tokens beyond the 128 asked.
func mediaRecords() []*record.Record {
	var rs []*record.Record
	for i := range 3 {
		base := int64(i+1) * 1e9
		r := &record.Record{ID: i, Phase: record.PhaseMeasure, Scheduled: base, Dispatched: base, Sent: base + 1e6,
			Headers: base + 2e6, FirstEvent: base + 3e8, Done: base + 4e8, Status: 200,
			Events: []record.Event{{T: base + 3e8, N: 1}, {T: base + 4e8, N: 1}}, InputTokens: 128, MaxTokens: 2,
			PromptTokens: 128 + 2738, PromptTokensSource: record.SourceServer, OutputTokens: 2, OutputTokensSource: record.SourceServer,
			Images: 2, ImageBytes: 2_000_000}
		if i == 0 {
			r.AudioClips, r.AudioBytes, r.AudioMS = 1, 160_044, 5000
		}
		rs = append(rs, r)
	}
	return rs
}

// TestMediaInEveryFormat: text, JSON, Markdown and HTML report the media sent and the server's tokens.
func TestMediaInEveryFormat(t *testing.T) {
	rs := mediaRecords()
	in := Input{Label: "m", Header: &record.Header{Schema: record.SchemaVersion}, Records: func(yield func(*record.Record, error) bool) {
		for _, r := range rs {
			if !yield(r, nil) {
				return
			}
		}
	}}
	for _, c := range []struct{ format, want string }{
		{"text", "images      6 in 3 requests (2.0 per request), 2.00 MB per request"},
		{"text", "beyond the text asked: 2738.0"},
		{"text", "audio       1 clips in 3 requests"},
		{"json", `"total_image_bytes": 6000000`},
		{"json", `"mean_media_tokens": 2738`},
		{"json", `"total_audio_seconds": 5`},
		{"html", "beyond the text asked: 2738.0"},
		{"md", "beyond the text asked: 2738.0"},
	} {
		var b bytes.Buffer
		if err := Render(&b, c.format, in); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: no %q in\n%s", c.format, c.want, b.String())
		}
		if strings.Contains(b.String(), "NaN") || strings.Contains(b.String(), "Inf") {
			t.Errorf("%s: NaN or Inf in the output", c.format)
		}
	}
}
