package report

import (
	"fmt"

	"servebench/metrics"
	"servebench/record"
)

// A run whose requests carried images or audio has a section of what they weighed and what
// the server counted for their prompts.
func init() { RegisterSection("media", 40, mediaSection) }

// mediaSection is nothing for a run without media.
func mediaSection(_ *record.Header, s *metrics.Summary) *Section {
	m := s.Media
	if m == nil {
		return nil
	}
	sec := &Section{Name: "media", Title: "Images and audio",
		Notes: []string{"bytes are the encoded files before base64, which adds a third on the wire"}}
	n := float64(m.Requests)
	if m.Images > 0 {
		sec.Lines = append(sec.Lines, Line{"images", fmt.Sprintf("%d in %d requests (%.1f per request), %s per request (mean; max %s), %s in all",
			m.Images, m.Requests, float64(m.Images)/n, mb(m.ImageBytesPerRequest.Mean), mb(m.ImageBytesPerRequest.Max), mb(float64(m.ImageBytes)))})
	}
	if m.AudioClips > 0 {
		sec.Lines = append(sec.Lines, Line{"audio", fmt.Sprintf("%d clips in %d requests, %.1f s per request (mean), %s per request (mean), %s in all",
			m.AudioClips, m.Requests, fin(float64(m.AudioMS)/n/1000), mb(m.AudioBytesPerRequest.Mean), mb(float64(m.AudioBytes)))})
	}
	if m.PromptTokens.Valid() {
		media := dash
		if m.MediaTokens.Valid() {
			media = fmt.Sprintf("%.1f (p50 %.0f, max %.0f)", fin(m.MediaTokens.Mean), fin(m.MediaTokens.Median), fin(m.MediaTokens.Max))
		}
		sec.Lines = append(sec.Lines, Line{"", fmt.Sprintf("server prompt tokens mean %.1f per request with media; beyond the text asked: %s", fin(m.PromptTokens.Mean), media)})
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
	sec.JSON = []Field{{"media", mo}}
	return sec
}

// mb is a byte count in MB (10⁶ bytes).
func mb(v float64) string { return fmt.Sprintf("%.2f MB", fin(v/1e6)) }

func medianOrNil(st metrics.Stat) *float64 {
	if !st.Valid() {
		return nil
	}
	return ptr(st.Median)
}
