package metrics

import "servebench/record"

// A run whose requests carried images or audio is broken down by what each carried: "image",
// "audio" or "image+audio" (requests with text only are in no group), so a modality's cost in
// TTFT and throughput reads beside the others.
func init() {
	RegisterKey(Key{
		Name: "modality", Plural: "modalities", Title: "Modalities",
		Note: "per kind of media a request carried (text-only requests are in none); latencies in ms; throughputs over the run's whole window",
		Of:   func(_ *record.Header, r *record.Record) (string, bool) { return modality(r), hasMedia(r) },
	})
}

// modality names the media a request carried.
func modality(r *record.Record) string {
	switch {
	case r.Images > 0 && r.AudioClips > 0:
		return "image+audio"
	case r.Images > 0:
		return "image"
	}
	return "audio"
}

// MediaSummary is what the images and audio clips of a run's completed measured requests
// weighed, and what the server counted for their prompts. Bytes are the encoded files (PNG,
// JPEG, WAV) before base64: a request's body carries 4/3 of them, plus the data: URL prefix.
type MediaSummary struct {
	Requests   int   `json:"requests"` // completed measured requests that carried media
	Images     int64 `json:"images"`
	ImageBytes int64 `json:"image_bytes"`
	AudioClips int64 `json:"audio_clips"`
	AudioBytes int64 `json:"audio_bytes"`
	AudioMS    int64 `json:"audio_ms"`
	// ImageBytesPerRequest and AudioBytesPerRequest are distributions over those requests.
	ImageBytesPerRequest Stat `json:"image_bytes_per_request"`
	AudioBytesPerRequest Stat `json:"audio_bytes_per_request"`
	// PromptTokens are the server-reported prompt tokens of those requests (usage), and
	// MediaTokens what they hold beyond the text the workload asked for (prompt tokens −
	// input tokens): the server's cost of the media (plus any chat template), the figure a
	// model's tokens-per-image rule predicts. Both only where the server reported usage.
	PromptTokens Stat `json:"prompt_tokens"`
	MediaTokens  Stat `json:"media_tokens"`
}

type mediaAcc struct {
	s                   MediaSummary
	img, aud, pt, media sample
}

// hasMedia reports whether the request carried images or audio.
func hasMedia(r *record.Record) bool { return r.Images > 0 || r.AudioClips > 0 }

// add takes one completed measured request.
func (a *mediaAcc) add(r *record.Record) {
	if !hasMedia(r) {
		return
	}
	s := &a.s
	s.Requests++
	s.Images += int64(r.Images)
	s.ImageBytes += r.ImageBytes
	s.AudioClips += int64(r.AudioClips)
	s.AudioBytes += r.AudioBytes
	s.AudioMS += r.AudioMS
	a.img.add(float64(r.ImageBytes))
	a.aud.add(float64(r.AudioBytes))
	if r.PromptTokensSource == record.SourceServer && r.PromptTokens > 0 {
		a.pt.add(float64(r.PromptTokens))
		if r.InputTokens > 0 {
			a.media.add(float64(r.PromptTokens - r.InputTokens))
		}
	}
}

// summary is nil for a run without media.
func (a *mediaAcc) summary(ps []float64) *MediaSummary {
	if a.s.Requests == 0 {
		return nil
	}
	s := a.s
	s.ImageBytesPerRequest = a.img.stat(ps)
	s.AudioBytesPerRequest = a.aud.stat(ps)
	s.PromptTokens = a.pt.stat(ps)
	s.MediaTokens = a.media.stat(ps)
	return &s
}
