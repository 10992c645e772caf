package workload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
)

// Media is one image or audio clip a chat request carries, stored as its recipe rather than
// its bytes: a synthetic pattern (Gen, Seed and size) or a file (Path and its SHA256). The
// recipe is what the workload hash covers and what a records header embeds for run --like,
// so a header never holds megabytes of base64; Render makes the bytes when the request is sent.
type Media struct {
	Type   string `json:"type"`             // MediaImage or MediaAudio
	Format string `json:"format"`           // png, jpeg or wav
	Width  int    `json:"width,omitempty"`  // image: pixels
	Height int    `json:"height,omitempty"` // image: pixels
	MS     int64  `json:"ms,omitempty"`     // audio: length in milliseconds
	// Gen names the generator of a synthetic item (MediaGen) and Seed its seed: the same
	// recipe gives the same bytes on every machine and in every later version that keeps Gen.
	Gen  string `json:"gen,omitempty"`
	Seed uint64 `json:"seed,omitempty"`
	// Path is a file's path and SHA256 its content hash, checked each time it is read.
	Path   string `json:"path,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// Media types and the generator of synthetic items.
const (
	MediaImage = "image"
	MediaAudio = "audio"
	// MediaGen is the synthetic generator's name and version; change it whenever the bytes
	// it makes for a recipe change, so that the workload hash changes with them.
	MediaGen = "servebench-pattern-1"
)

// Bounds that keep a request's media, and so the client's memory, bounded: a request holds
// at most MaxMediaItems items, each image at most MaxImageSide pixels a side, all its images
// together at most MaxRequestPixels pixels, each clip at most MaxAudioMS and all its clips
// together at most MaxRequestAudioMS, each file at most MaxMediaFileBytes and all its items'
// bytes together at most MaxRequestMediaBytes. A run holds the media of every request in
// flight at once: MaxRunMediaBytes bounds that, on the estimate of RequestMediaBytes.
const (
	MaxMediaItems        = 64
	MaxImageSide         = 8192
	MaxRequestPixels     = 8192 * 8192
	MaxAudioMS           = 10 * 60 * 1000
	MaxRequestAudioMS    = MaxAudioMS
	MaxMediaFileBytes    = 64 << 20
	MaxRequestMediaBytes = 512 << 20
	MaxRunMediaBytes     = 4 << 30
)

// RequestMediaBytes is an upper estimate of the bytes a request's rendered media take while it
// is sent: 4 bytes a pixel for an image (its RGBA canvas; the encoded file is no larger for
// our patterns), 2 bytes a sample at WAVRate for a clip, MaxMediaFileBytes for a file whose
// size is not known here. The request body holds them again in base64 (4/3).
func RequestMediaBytes(images, width, height, clips int, clipMS int64) int64 {
	img := int64(images) * int64(width) * int64(height) * 4
	audio := int64(clips) * (44 + clipMS*2*WAVRate/1000)
	return (img + audio) * 7 / 3 // the raw bytes and their base64 in the body
}

// Rendered is a media item's bytes, made when its request is sent.
type Rendered struct {
	*Media
	Data []byte
}

// MIME is the item's media type for a data: URL (image/png, image/jpeg, audio/wav).
func (m *Media) MIME() string {
	if m.Type == MediaAudio {
		return "audio/" + m.Format
	}
	return "image/" + m.Format
}

// Render makes the bytes of every item of ms: synthetic ones from their recipe, files read
// and checked against their hash (a file changed since the workload was built is an error).
// The items' bytes together are at most MaxRequestMediaBytes (files of up to MaxMediaFileBytes
// each could add up to gigabytes in one request).
func Render(ms []Media) ([]Rendered, error) {
	out := make([]Rendered, len(ms))
	total := 0
	for i := range ms {
		b, err := ms[i].bytes()
		if err != nil {
			return nil, err
		}
		if total += len(b); total > MaxRequestMediaBytes {
			return nil, fmt.Errorf("more than %d MiB of media in one request", MaxRequestMediaBytes>>20)
		}
		out[i] = Rendered{Media: &ms[i], Data: b}
	}
	return out, nil
}

func (m *Media) bytes() ([]byte, error) {
	if m.Path != "" {
		return readMediaFile(m.Path, m.SHA256)
	}
	if m.Gen != MediaGen {
		return nil, fmt.Errorf("media generator %q is not this version's (%s)", m.Gen, MediaGen)
	}
	switch m.Type {
	case MediaImage:
		return SyntheticImage(m.Width, m.Height, m.Format, m.Seed)
	case MediaAudio:
		return SyntheticWAV(m.MS, m.Seed), nil
	}
	return nil, fmt.Errorf("unknown media type %q", m.Type)
}

// readMediaFile reads a media file, bounded, and checks its hash when one is given.
func readMediaFile(path, sum string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxMediaFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxMediaFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB", path, MaxMediaFileBytes>>20)
	}
	if sum != "" && contentHash(b) != sum {
		return nil, fmt.Errorf("%s: changed since the workload was built (sha256 differs)", path)
	}
	return b, nil
}

func contentHash(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// CheckMedia checks a media list (read from a prompts file or an embedded workload, or
// attached by a MediaPlan) against the bounds above.
func CheckMedia(ms []Media) error {
	if len(ms) > MaxMediaItems {
		return fmt.Errorf(`"media": at most %d items, got %d`, MaxMediaItems, len(ms))
	}
	pixels, audioMS := 0, int64(0)
	for i := range ms {
		m := &ms[i]
		switch {
		case m.Type == MediaImage && m.Format != "png" && m.Format != "jpeg":
			return fmt.Errorf(`"media"[%d]: image format must be png or jpeg, got %q`, i, m.Format)
		case m.Type == MediaAudio && m.Format != "wav":
			return fmt.Errorf(`"media"[%d]: audio format must be wav, got %q`, i, m.Format)
		case m.Type != MediaImage && m.Type != MediaAudio:
			return fmt.Errorf(`"media"[%d]: type must be image or audio, got %q`, i, m.Type)
		case m.Path == "" && m.Gen == "":
			return fmt.Errorf(`"media"[%d]: need "path" or "gen"`, i)
		case m.Width < 0 || m.Width > MaxImageSide || m.Height < 0 || m.Height > MaxImageSide:
			return fmt.Errorf(`"media"[%d]: image sides must be 1 to %d`, i, MaxImageSide)
		case m.MS < 0 || m.MS > MaxAudioMS:
			return fmt.Errorf(`"media"[%d]: audio length must be at most %d s`, i, MaxAudioMS/1000)
		case m.Path == "" && m.Type == MediaImage && (m.Width == 0 || m.Height == 0):
			return fmt.Errorf(`"media"[%d]: a synthetic image needs "width" and "height"`, i)
		case m.Path == "" && m.Type == MediaAudio && m.MS == 0:
			return fmt.Errorf(`"media"[%d]: a synthetic clip needs "ms"`, i)
		}
		pixels += m.Width * m.Height
		audioMS += m.MS
	}
	switch {
	case pixels > MaxRequestPixels:
		return errors.New(`"media": more than 8192×8192 pixels of images in one request`)
	case audioMS > MaxRequestAudioMS:
		return fmt.Errorf(`"media": more than %d s of audio in one request`, MaxRequestAudioMS/1000)
	}
	return nil
}

// sniffImage returns the format (png or jpeg) of an image file's first bytes, or "".
func sniffImage(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return "jpeg"
	}
	return ""
}
