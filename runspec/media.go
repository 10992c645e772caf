package runspec

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"servebench/client/apis"
	"servebench/workload"
)

// mediaAPI is the one API whose requests can carry images and audio: OpenAI chat content parts
// (image_url with a data: URL, input_audio), as vLLM, SGLang and OpenAI serve them.
const mediaAPI = "openai-chat"

// HasMedia reports whether the run's requests carry images or audio.
func (s *Spec) HasMedia() bool { return s.Images != "" || s.Audio != "" }

// validateMedia checks --images, --image-format, --image-files and --audio.
func (s *Spec) validateMedia() error {
	if _, err := s.MediaPlan(); err != nil {
		return err
	}
	if !s.HasMedia() {
		if s.ImageFiles != "" {
			return Usagef("--image-files needs --images N (images per request)")
		}
		return nil
	}
	if name, err := apis.Canonical(s.API); s.IsSet("api") && (err != nil || name != mediaAPI) {
		return Usagef("--images and --audio need --api %s (images and audio travel as chat content parts), not %s", mediaAPI, s.API)
	}
	if s.Turns > 1 {
		return Usagef("--images and --audio with --turns: not supported (each turn would resend the history's media)")
	}
	return nil
}

// resolveMedia picks the chat API for a run with media when no API was given.
func (s *Spec) resolveMedia() {
	if s.HasMedia() && !s.IsSet("api") {
		s.API = mediaAPI
	}
	if s.Images != "" && s.ImageFiles == "" {
		if p, err := s.MediaPlan(); err == nil {
			s.ImageFormat = p.Format // recorded as sent: png when not given, jpeg for jpg
		}
	}
}

// MediaPlan parses the media settings into the plan the workload builder attaches; it reads
// no file (bench lists --image-files). Errors are usage errors naming the flag.
func (s *Spec) MediaPlan() (*workload.MediaPlan, error) {
	p := &workload.MediaPlan{Format: s.ImageFormat}
	if p.Format == "" {
		p.Format = "png"
	}
	if p.Format == "jpg" {
		p.Format = "jpeg"
	}
	if p.Format != "png" && p.Format != "jpeg" {
		return nil, Usagef("--image-format %q: want png or jpeg", s.ImageFormat)
	}
	var err error
	if s.Images != "" {
		if p.Images, p.Width, p.Height, err = parseImages(s.Images); err != nil {
			return nil, Usagef("--images %q: %v", s.Images, err)
		}
		switch {
		case s.ImageFiles == "" && p.Width == 0:
			return nil, Usagef("--images %q: give a size (2x1024x1024 is 2 images of 1024×1024) or --image-files", s.Images)
		case s.ImageFiles != "" && p.Width != 0:
			return nil, Usagef("--images %q with --image-files: give only the count (the files have their own sizes)", s.Images)
		case p.Images*p.Width*p.Height > workload.MaxRequestPixels:
			return nil, Usagef("--images %q: more than 8192×8192 pixels per request", s.Images)
		}
	}
	if s.Audio != "" {
		var d time.Duration
		if p.Audio, d, err = parseAudio(s.Audio); err != nil {
			return nil, Usagef("--audio %q: %v", s.Audio, err)
		}
		p.AudioMS = d.Milliseconds()
		if int64(p.Audio)*p.AudioMS > workload.MaxRequestAudioMS {
			return nil, Usagef("--audio %q: more than %v of audio per request", s.Audio, workload.MaxRequestAudioMS*time.Millisecond)
		}
	}
	if p.Images+p.Audio > workload.MaxMediaItems {
		return nil, Usagef("--images and --audio: at most %d items per request", workload.MaxMediaItems)
	}
	if err := s.checkRunMedia(p); err != nil {
		return nil, err
	}
	return p, nil
}

// checkRunMedia bounds the media a run holds at once: each request in flight holds its own
// (synthetic images and clips, whose sizes are known before any is made), so their estimate
// times the most requests in flight (closed-loop users, or the open loop's cap) is at most
// workload.MaxRunMediaBytes.
func (s *Spec) checkRunMedia(p *workload.MediaPlan) error {
	inFlight := s.Concurrency
	if inFlight == 0 {
		inFlight = s.MaxConcurrency
	}
	if inFlight == 0 && !s.OpenLoop() && s.Stages == "" {
		inFlight = DefaultConcurrency
	}
	per := workload.RequestMediaBytes(p.Images, p.Width, p.Height, p.Audio, p.AudioMS)
	if inFlight <= 0 || per <= 0 || per <= workload.MaxRunMediaBytes/int64(inFlight) {
		return nil
	}
	flag := "--concurrency"
	if s.Concurrency == 0 {
		flag = "--max-concurrency"
	}
	if s.Concurrency == 0 && s.MaxConcurrency == 0 {
		flag = "--concurrency (default)"
	}
	return Usagef("--images and --audio: about %d MiB of media per request times %d requests in flight (%s) is more than the %d GiB a run may hold at once: lower one of them",
		per>>20, inFlight, flag, workload.MaxRunMediaBytes>>30)
}

// parseImages reads N (a count, for --image-files), WxH (one image) or NxWxH.
func parseImages(v string) (n, w, h int, err error) {
	f := strings.Split(strings.ToLower(v), "x")
	nums := make([]int, len(f))
	for i, x := range f {
		if nums[i], err = strconv.Atoi(x); err != nil || nums[i] < 1 {
			return 0, 0, 0, fmt.Errorf("want N, WxH or NxWxH of positive integers (e.g. 2x1024x1024)")
		}
	}
	switch len(nums) {
	case 1:
		n = nums[0]
	case 2:
		n, w, h = 1, nums[0], nums[1]
	case 3:
		n, w, h = nums[0], nums[1], nums[2]
	default:
		return 0, 0, 0, fmt.Errorf("want N, WxH or NxWxH (e.g. 2x1024x1024)")
	}
	if n > workload.MaxMediaItems {
		return 0, 0, 0, fmt.Errorf("at most %d images per request", workload.MaxMediaItems)
	}
	if w > workload.MaxImageSide || h > workload.MaxImageSide {
		return 0, 0, 0, fmt.Errorf("image sides must be 1 to %d pixels", workload.MaxImageSide)
	}
	return n, w, h, nil
}

// parseAudio reads a clip length (5s, 1500ms) or N clips of it (2x5s).
func parseAudio(v string) (int, time.Duration, error) {
	n, length := 1, v
	if i := strings.IndexByte(v, 'x'); i > 0 {
		var err error
		if n, err = strconv.Atoi(v[:i]); err != nil || n < 1 || n > workload.MaxMediaItems {
			return 0, 0, fmt.Errorf("want LENGTH or NxLENGTH, N 1 to %d (e.g. 5s or 2x5s)", workload.MaxMediaItems)
		}
		length = v[i+1:]
	}
	d, err := time.ParseDuration(length)
	switch {
	case err != nil:
		return 0, 0, fmt.Errorf("want a length such as 5s or 2x5s")
	case d < time.Millisecond || d > workload.MaxAudioMS*time.Millisecond:
		return 0, 0, fmt.Errorf("a clip must be 1ms to %v", workload.MaxAudioMS*time.Millisecond)
	}
	return n, d, nil
}

// bindMediaFlags binds the flags that put images and audio clips in every chat request. The
// names follow the other tools where one exists (AIPerf's
// --image-format, --audio-length-mean), made compact: a count and a size in one value.
func bindMediaFlags(fs *pflag.FlagSet, s *Spec) {
	fs.StringVar(&s.Images, "images", s.Images, "images in every chat request: NxWxH synthetic images of W×H pixels (2x1024x1024), WxH for one, or N taken in turn from --image-files; sent as image_url data: URLs (implies --api openai-chat)")
	fs.StringVar(&s.ImageFormat, "image-format", s.ImageFormat, "synthetic image format: png or jpeg (default png)")
	fs.StringVar(&s.ImageFiles, "image-files", s.ImageFiles, `images from files: a folder (its PNG and JPEG files, in name order) or a JSONL file of paths ({"path": "a.png"} per line); used in turn, --images N per request`)
	fs.StringVar(&s.Audio, "audio", s.Audio, "audio clips in every chat request: a length (5s) or N clips of it (2x5s), synthetic 16 kHz WAV sent as input_audio (implies --api openai-chat)")
}
