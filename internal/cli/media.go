package cli

import (
	"github.com/spf13/pflag"

	"servebench/runspec"
)

// bindMediaFlags binds the flags that put images and audio clips in every chat request. The
// names follow the other tools where one exists (AIPerf's
// --image-format, --audio-length-mean), made compact: a count and a size in one value.
func bindMediaFlags(fs *pflag.FlagSet, s *runspec.Spec) {
	fs.StringVar(&s.Images, "images", s.Images, "images in every chat request: NxWxH synthetic images of W×H pixels (2x1024x1024), WxH for one, or N taken in turn from --image-files; sent as image_url data: URLs (implies --api openai-chat)")
	fs.StringVar(&s.ImageFormat, "image-format", s.ImageFormat, "synthetic image format: png or jpeg (default png)")
	fs.StringVar(&s.ImageFiles, "image-files", s.ImageFiles, `images from files: a folder (its PNG and JPEG files, in name order) or a JSONL file of paths ({"path": "a.png"} per line); used in turn, --images N per request`)
	fs.StringVar(&s.Audio, "audio", s.Audio, "audio clips in every chat request: a length (5s) or N clips of it (2x5s), synthetic 16 kHz WAV sent as input_audio (implies --api openai-chat)")
}
