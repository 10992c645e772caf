package report

import (
	"fmt"
	"strings"

	"servebench/metrics"
)

// textMedia writes what the requests' images and audio weighed and what the server counted
// for their prompts; nothing for a run without media.
func textMedia(b *strings.Builder, s *metrics.Summary) {
	m := s.Media
	if m == nil {
		return
	}
	n := float64(m.Requests)
	if m.Images > 0 {
		line(b, "images", "%d in %d requests (%.1f per request), %s per request (mean; max %s), %s in all",
			m.Images, m.Requests, float64(m.Images)/n, mb(m.ImageBytesPerRequest.Mean), mb(m.ImageBytesPerRequest.Max), mb(float64(m.ImageBytes)))
	}
	if m.AudioClips > 0 {
		line(b, "audio", "%d clips in %d requests, %.1f s per request (mean), %s per request (mean), %s in all",
			m.AudioClips, m.Requests, fin(float64(m.AudioMS)/n/1000), mb(m.AudioBytesPerRequest.Mean), mb(float64(m.AudioBytes)))
	}
	if m.PromptTokens.Valid() {
		media := dash
		if m.MediaTokens.Valid() {
			media = fmt.Sprintf("%.1f (p50 %.0f, max %.0f)", fin(m.MediaTokens.Mean), fin(m.MediaTokens.Median), fin(m.MediaTokens.Max))
		}
		line(b, "", "server prompt tokens mean %.1f per request with media; beyond the text asked: %s", fin(m.PromptTokens.Mean), media)
	}
	b.WriteString("(bytes are the encoded files before base64, which adds a third on the wire)\n\n")
}

// mb is a byte count in MB (10⁶ bytes).
func mb(v float64) string { return fmt.Sprintf("%.2f MB", fin(v/1e6)) }

// jsonMedia adds the media figures to the JSON summary.
func jsonMedia(o *object, s *metrics.Summary) {
	m := s.Media
	if m == nil {
		return
	}
	mo := &object{}
	mo.set("requests", m.Requests)
	mo.set("total_images", m.Images)
	mo.set("total_image_bytes", m.ImageBytes)
	mo.set("mean_image_bytes_per_request", meanOrNil(m.ImageBytesPerRequest))
	mo.set("total_audio_clips", m.AudioClips)
	mo.set("total_audio_bytes", m.AudioBytes)
	mo.set("total_audio_seconds", float64(m.AudioMS)/1000)
	mo.set("mean_audio_bytes_per_request", meanOrNil(m.AudioBytesPerRequest))
	mo.set("mean_prompt_tokens", meanOrNil(m.PromptTokens))
	mo.set("mean_media_tokens", meanOrNil(m.MediaTokens))
	mo.set("median_media_tokens", medianOrNil(m.MediaTokens))
	o.set("media", mo)
}

func medianOrNil(st metrics.Stat) *float64 {
	if !st.Valid() {
		return nil
	}
	return ptr(st.Median)
}

// mediaRows are the HTML summary rows of the media figures, when any run has media.
func mediaRows(runs []Run) []tableRow {
	has := false
	for _, r := range runs {
		has = has || r.Summary.Media != nil
	}
	if !has {
		return nil
	}
	figs := []struct {
		name string
		v    func(m *metrics.MediaSummary) *float64
		prec int
	}{
		{"images", func(m *metrics.MediaSummary) *float64 { return ptr(float64(m.Images)) }, 0},
		{"image MB per request (mean)", func(m *metrics.MediaSummary) *float64 { return scaled(meanOrNil(m.ImageBytesPerRequest), 1e-6) }, 2},
		{"audio clips", func(m *metrics.MediaSummary) *float64 { return ptr(float64(m.AudioClips)) }, 0},
		{"audio MB per request (mean)", func(m *metrics.MediaSummary) *float64 { return scaled(meanOrNil(m.AudioBytesPerRequest), 1e-6) }, 2},
		{"server prompt tokens with media (mean)", func(m *metrics.MediaSummary) *float64 { return meanOrNil(m.PromptTokens) }, 1},
		{"media tokens beyond the text (mean)", func(m *metrics.MediaSummary) *float64 { return meanOrNil(m.MediaTokens) }, 1},
	}
	var rows []tableRow
	for _, f := range figs {
		row := tableRow{Name: f.name}
		var vals []*float64
		for _, r := range runs {
			var v *float64
			if r.Summary.Media != nil {
				v = f.v(r.Summary.Media)
			}
			vals = append(vals, v)
			row.Cells = append(row.Cells, optf(v, f.prec))
		}
		if len(vals) == 2 {
			row.Delta = delta(vals[0], vals[1])
		}
		rows = append(rows, row)
	}
	return rows
}

func scaled(v *float64, k float64) *float64 {
	if v == nil {
		return nil
	}
	return ptr(*v * k)
}
