package workload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
)

// The synthetic generator (MediaGen). Every figure is integer arithmetic on a seeded
// xorshift stream, so a recipe makes the same pixels and samples on every platform; nothing
// is fetched from anywhere. Images are smooth seeded gradients crossed by a seeded checker,
// plus a few levels of noise: a photo-like mix of what compresses and what does not, so a PNG
// or JPEG of them is neither a few bytes nor raw size. Each request gets its own seed, so a
// server's image cache or prefix cache cannot serve one request from another's image.

// SyntheticImageQuality is the JPEG quality of synthetic JPEG images.
const SyntheticImageQuality = 90

// SyntheticImage encodes the seeded w×h pattern as format (png or jpeg).
func SyntheticImage(w, h int, format string, seed uint64) ([]byte, error) {
	if w < 1 || h < 1 || w > MaxImageSide || h > MaxImageSide {
		return nil, fmt.Errorf("image size %dx%d: sides must be 1 to %d", w, h, MaxImageSide)
	}
	img := pattern(w, h, seed)
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		// BestSpeed: the client makes these on its send path; the size differs little
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		err = enc.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: SyntheticImageQuality})
	default:
		return nil, fmt.Errorf("image format %q: want png or jpeg", format)
	}
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", format, err)
	}
	return buf.Bytes(), nil
}

// pattern draws the seeded image. The per-column figures are computed once (the per-pixel
// loop is the client's send path).
func pattern(w, h int, seed uint64) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	p := splitmix(seed)
	c0, c1, c2 := uint8(p), uint8(p>>8), uint8(p>>16)
	cell := 8 << (p >> 24 & 3) // checker cell: 8 to 64 pixels
	gx := make([]uint8, w)
	cx := make([]uint8, w)
	for x := range w {
		gx[x] = uint8(x * 255 / w)
		cx[x] = uint8(x / cell & 1)
	}
	rng := splitmix(p) | 1
	for y := range h {
		row := img.Pix[y*img.Stride : y*img.Stride+4*w]
		gy := uint8(y * 255 / h)
		cy := uint8(y / cell & 1)
		for x := range w {
			rng ^= rng << 13
			rng ^= rng >> 7
			rng ^= rng << 17
			n := uint8(rng & 7)
			chk := (cx[x] ^ cy) * 48
			i := 4 * x
			row[i] = c0 + gx[x] + n
			row[i+1] = c1 + gy + n
			row[i+2] = c2 + (gx[x]>>1 + gy>>1) + chk + n
			row[i+3] = 255
		}
	}
	return img
}

// splitmix is SplitMix64's output function: a seed spread over all 64 bits.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// WAVRate is the sample rate of synthetic clips: 16 kHz mono 16-bit PCM, what Whisper-style
// audio encoders (Qwen2-Audio, Qwen2.5-Omni, Gemma 3n) resample to anyway.
const WAVRate = 16000

// SyntheticWAV is a seeded ms-millisecond clip as a WAV file: a triangle tone of a seeded
// pitch plus noise.
func SyntheticWAV(ms int64, seed uint64) []byte {
	n := int(ms * WAVRate / 1000)
	b := make([]byte, 44+2*n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+2*n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)        // fmt chunk size
	binary.LittleEndian.PutUint16(b[20:], 1)         // PCM
	binary.LittleEndian.PutUint16(b[22:], 1)         // mono
	binary.LittleEndian.PutUint32(b[24:], WAVRate)   // sample rate
	binary.LittleEndian.PutUint32(b[28:], 2*WAVRate) // byte rate
	binary.LittleEndian.PutUint16(b[32:], 2)         // block align
	binary.LittleEndian.PutUint16(b[34:], 16)        // bits per sample
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*n))
	p := splitmix(seed)
	period := 20 + int(p%140) // 114 Hz to 800 Hz
	rng := splitmix(p) | 1
	for i := range n {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		ph := i % period
		tri := 4*min(ph, period-ph)*8000/period - 8000 // −8000 … +8000
		s := int16(tri + int(rng%512) - 256)
		binary.LittleEndian.PutUint16(b[44+2*i:], uint16(s))
	}
	return b
}
