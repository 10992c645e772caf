package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	_ "image/jpeg" // image.DecodeConfig of JPEG inputs
	_ "image/png"  // image.DecodeConfig of PNG inputs
	"strings"
)

// Images and audio in chat requests. The simulator reads each content part of type
// "image_url" (a data: URL; it fetches nothing) and "input_audio" ({"data": base64,
// "format": "wav"}), decodes only what it needs (an image's size, a WAV's length), and costs
// each as prompt tokens by its preset's MediaRule. The tokens join the prompt after its text,
// so they are prefilled like text (prefill time rises with them), counted in
// usage.prompt_tokens, and hashed into the prefix cache's blocks by the item's content, as
// vLLM hashes multimodal items: the same image after the same text is a cache hit.

// MediaRule is how a model preset turns images and audio into prompt tokens.
type MediaRule struct {
	Name string // what the rule is, for Describe and the docs
	// Patch > 0: an image of w×h pixels is ceil(w/Patch)·ceil(h/Patch) tokens — Qwen2-VL's
	// rule: 14-pixel patches merged 2×2, so one token per 28×28 pixels (before its resizing
	// to multiples of 28, which this leaves out).
	Patch int
	// Tile > 0 (when Patch is 0): TileBase + TileTokens·ceil(w/Tile)·ceil(h/Tile) tokens, a
	// fixed cost per tile (OpenAI's published 170 tokens per 512-pixel tile plus 85, without
	// its resizing).
	Tile, TileTokens, TileBase int
	// AudioPerSec is the tokens per second of audio: 25 for Whisper-style encoders (50 frames
	// per second pooled by 2: Qwen2-Audio, Qwen2.5-Omni; Gemma 3n's 40 ms per token).
	AudioPerSec int
}

// mediaRules are the presets' rules; a preset not listed has defaultMediaRule.
var mediaRules = map[string]MediaRule{
	"qwen2-vl-7b": {Name: "qwen2-vl: ceil(w/28)*ceil(h/28) per image, 25/s audio", Patch: 28, AudioPerSec: 25},
}

var defaultMediaRule = MediaRule{Name: "tile: 85+170*ceil(w/512)*ceil(h/512) per image, 25/s audio",
	Tile: 512, TileTokens: 170, TileBase: 85, AudioPerSec: 25}

// mediaRuleOf is the rule of a preset.
func mediaRuleOf(preset string) MediaRule {
	if r, ok := mediaRules[preset]; ok {
		return r
	}
	return defaultMediaRule
}

// ImageTokens is the prompt tokens of one w×h image under the rule.
func (r MediaRule) ImageTokens(w, h int) int {
	if r.Patch > 0 {
		return ceilDiv(w, r.Patch) * ceilDiv(h, r.Patch)
	}
	return r.TileBase + r.TileTokens*ceilDiv(w, r.Tile)*ceilDiv(h, r.Tile)
}

// AudioTokens is the prompt tokens of ms milliseconds of audio (rounded up).
func (r MediaRule) AudioTokens(ms int64) int {
	return int((ms*int64(r.AudioPerSec) + 999) / 1000)
}

// MediaRule is the rule this server costs images and audio by.
func (s *Server) MediaRule() MediaRule { return mediaRuleOf(s.cfg.ModelPreset) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// mediaInput is one decoded image or clip of a request.
type mediaInput struct {
	audio bool
	w, h  int
	ms    int64
	hash  uint64 // of the item's bytes
}

// tokens is the item's prompt tokens under r.
func (m mediaInput) tokens(r MediaRule) int {
	if m.audio {
		return r.AudioTokens(m.ms)
	}
	return r.ImageTokens(m.w, m.h)
}

// contentPart is one element of a chat message's content list, as decoded into any.
type contentPart map[string]any

// str is the string at key (or at key.sub when sub is given); "" when absent.
func (p contentPart) str(key, sub string) (string, bool) {
	v, ok := p[key]
	if sub != "" {
		m, isMap := v.(map[string]any)
		if !isMap {
			return "", false
		}
		v, ok = m[sub]
	}
	s, isStr := v.(string)
	return s, ok && isStr
}

// maxMediaBytes bounds one decoded item, as the client bounds its files.
const maxMediaBytes = 64 << 20

// decodePart reads a media part; ok is false for a part that is not media.
func decodePart(p contentPart) (m mediaInput, ok bool, err error) {
	typ, _ := p.str("type", "")
	switch typ {
	case "image_url":
		u, has := p.str("image_url", "url")
		if !has {
			return m, true, errors.New(`image_url part without "image_url": {"url": ...}`)
		}
		m, err = decodeImageURL(u)
		return m, true, err
	case "input_audio":
		data, has := p.str("input_audio", "data")
		if !has {
			return m, true, errors.New(`input_audio part without "input_audio": {"data": ...}`)
		}
		if f, _ := p.str("input_audio", "format"); f != "wav" {
			return m, true, fmt.Errorf("input_audio format %q: the simulator reads wav", f)
		}
		b, err := decodeB64(data)
		if err != nil {
			return m, true, fmt.Errorf("input_audio data: %v", err)
		}
		ms, err := wavMS(b)
		return mediaInput{audio: true, ms: ms, hash: hashBytes(b)}, true, err
	}
	return m, false, nil
}

// decodeImageURL reads a data:image/...;base64, URL for the image's size.
func decodeImageURL(u string) (mediaInput, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return mediaInput{}, errors.New("image_url: the simulator fetches no URLs; send a data: URL")
	}
	_, b64, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return mediaInput{}, errors.New("image_url: want a base64 data: URL")
	}
	b, err := decodeB64(b64)
	if err != nil {
		return mediaInput{}, fmt.Errorf("image_url: %v", err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return mediaInput{}, fmt.Errorf("image_url: not a PNG or JPEG image: %v", err)
	}
	return mediaInput{w: cfg.Width, h: cfg.Height, hash: hashBytes(b)}, nil
}

func decodeB64(s string) ([]byte, error) {
	if base64.StdEncoding.DecodedLen(len(s)) > maxMediaBytes {
		return nil, fmt.Errorf("larger than %d MiB", maxMediaBytes>>20)
	}
	return base64.StdEncoding.DecodeString(s)
}

// wavMS is a WAV file's length: its data chunk's size over the fmt chunk's byte rate.
func wavMS(b []byte) (int64, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0, errors.New("input_audio: not a WAV file")
	}
	var rate uint32
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8:]
		switch {
		case id == "fmt " && len(body) >= 16:
			rate = binary.LittleEndian.Uint32(body[8:])
		case id == "data" && rate > 0:
			size = min(size, len(body))
			return int64(size) * 1000 / int64(rate), nil
		}
		p += 8 + size + size&1
	}
	return 0, errors.New("input_audio: WAV without fmt and data chunks")
}

func hashBytes(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// mediaTokenIDs feeds the block hasher the item's token ids: ids made of its content hash and
// position, so that two different images never share a block and the same image does.
func (m mediaInput) feed(bh *blockHasher, n int) {
	for i := range n {
		bh.add(int((m.hash + uint64(i)*0x9e3779b97f4a7c15) >> 1))
	}
}

// parseParts reads a content list: its text parts joined by spaces, and its media.
func parseParts(list []any, media *[]mediaInput) (string, error) {
	texts := make([]string, 0, len(list))
	for i, x := range list {
		p, isMap := x.(map[string]any)
		if !isMap {
			return "", fmt.Errorf("part %d: not an object", i)
		}
		m, ok, err := decodePart(p)
		switch {
		case err != nil:
			return "", fmt.Errorf("part %d: %w", i, err)
		case ok:
			*media = append(*media, m)
		default:
			if t, _ := contentPart(p).str("type", ""); t == "text" {
				text, _ := contentPart(p).str("text", "")
				texts = append(texts, text)
			}
		}
	}
	return strings.Join(texts, " "), nil
}

// costMedia adds the request's images and clips to its prompt: their tokens by the preset's
// rule, fed to the prefix cache's block hasher when it is on. It returns the tokens added.
func (s *Server) costMedia(p *genParams) int {
	rule, n := s.MediaRule(), 0
	hashing := s.model != nil && !s.cfg.NoPrefixCache
	for _, m := range p.req.media {
		k := m.tokens(rule)
		if hashing {
			m.feed(&p.hasher, k)
		}
		n += k
	}
	return n
}
