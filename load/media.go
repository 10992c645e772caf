package load

import (
	"fmt"

	"servebench/client"
	"servebench/record"
	"servebench/workload"
)

// renderMedia makes the bytes of the request's images and audio clips (workload.Render) and
// notes what it carries in its record. It runs before the request is dispatched, so the time
// it takes is client queue time, never the server's TTFT. An error (an image file changed or
// gone since the workload was built) fails the request before anything is sent.
func renderMedia(req *client.Request, rec *record.Record) error {
	if len(req.Request.Media) == 0 {
		return nil
	}
	rs, err := workload.Render(req.Request.Media)
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	req.MediaData = rs
	for _, m := range rs {
		switch m.Type {
		case workload.MediaImage:
			rec.Images++
			rec.ImageBytes += int64(len(m.Data))
		case workload.MediaAudio:
			rec.AudioClips++
			rec.AudioBytes += int64(len(m.Data))
			rec.AudioMS += m.MS
		}
	}
	return nil
}
