package record

// appendMedia appends the media fields of r (each left out when 0).
func appendMedia(b []byte, r *Record) []byte {
	b = appendIntField(b, `,"images":`, int64(r.Images), true)
	b = appendIntField(b, `,"image_bytes":`, r.ImageBytes, true)
	b = appendIntField(b, `,"audio_clips":`, int64(r.AudioClips), true)
	b = appendIntField(b, `,"audio_bytes":`, r.AudioBytes, true)
	b = appendIntField(b, `,"audio_ms":`, r.AudioMS, true)
	return appendIntField(b, `,"inputs":`, int64(r.Inputs), true) // a pooling request's batch size
}
