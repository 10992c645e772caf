package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestMediaRules(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	q := mediaRuleOf("qwen2-vl-7b")
	for _, c := range []struct{ w, h, want int }{{1024, 1024, 37 * 37}, {28, 28, 1}, {29, 56, 4}, {1, 1, 1}} {
		if got := q.ImageTokens(c.w, c.h); got != c.want {
			t.Errorf("qwen2-vl %dx%d: %d tokens, want %d", c.w, c.h, got, c.want)
		}
	}
	d := mediaRuleOf("llama-3.1-8b")
	if got := d.ImageTokens(1024, 1024); got != 85+170*4 {
		t.Errorf("tile rule 1024²: %d, want %d", got, 85+170*4)
	}
	if got := d.AudioTokens(5000); got != 125 {
		t.Errorf("5 s of audio: %d tokens, want 125", got)
	}
	if got := d.AudioTokens(1); got != 1 {
		t.Errorf("1 ms of audio: %d tokens, want 1 (rounded up)", got)
	}
}

func testPNG(t *testing.T, w, h int, shade uint8) string {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = shade
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

func testWAV(ms int) string {
	n := ms * 16
	b := make([]byte, 44+2*n)
	copy(b, "RIFF")
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint32(b[28:], 32000)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(2*n))
	return base64.StdEncoding.EncodeToString(b)
}

func mediaChat(text string, parts ...map[string]any) map[string]any {
	content := []any{map[string]any{"type": "text", "text": text}}
	for _, p := range parts {
		content = append(content, p)
	}
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": content}}, "max_tokens": 2}
}

type usageBody struct {
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		Details      *struct {
			Cached int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

func usageOf(t *testing.T, resp *http.Response) usageBody {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
	var u usageBody
	if err := json.Unmarshal(b, &u); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestMediaPromptTokens: image and audio parts add the rule's tokens to usage.prompt_tokens,
// and enter the prefix cache by content: the same image after the same text is a hit, another
// image is not.
func TestMediaPromptTokens(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	c := DefaultConfig()
	c.ModelPreset = "qwen2-vl-7b"
	_, base := startSim(t, c)
	text := usageOf(t, post(t, base+"/v1/chat/completions", mediaChat("hello there"))).Usage.PromptTokens
	img := map[string]any{"type": "image_url", "image_url": map[string]any{"url": testPNG(t, 100, 60, 1)}}
	aud := map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": testWAV(2000), "format": "wav"}}
	u := usageOf(t, post(t, base+"/v1/chat/completions", mediaChat("hello there", img, aud)))
	if want := text + 4*3 + 50; u.Usage.PromptTokens != want {
		t.Errorf("text + 100×60 image + 2 s audio: %d prompt tokens, want %d", u.Usage.PromptTokens, want)
	}
	big := map[string]any{"type": "image_url", "image_url": map[string]any{"url": testPNG(t, 560, 560, 2)}}
	first := usageOf(t, post(t, base+"/v1/chat/completions", mediaChat("hello there", big)))
	again := usageOf(t, post(t, base+"/v1/chat/completions", mediaChat("hello there", big)))
	other := map[string]any{"type": "image_url", "image_url": map[string]any{"url": testPNG(t, 560, 560, 3)}}
	diff := usageOf(t, post(t, base+"/v1/chat/completions", mediaChat("hello there", other)))
	if first.Usage.PromptTokens != text+400 || again.Usage.Details == nil || again.Usage.Details.Cached < 384 {
		t.Errorf("560² image: %d tokens (want %d), repeat cached %+v (want ≥ 384)", first.Usage.PromptTokens, text+400, again.Usage.Details)
	}
	if diff.Usage.Details != nil && diff.Usage.Details.Cached > text {
		t.Errorf("another image after the same text: %d tokens cached, want at most the text's %d", diff.Usage.Details.Cached, text)
	}
}

// TestMediaBadParts: a URL the simulator would have to fetch, broken base64, a non-image and
// a non-WAV clip are 400s that say what is wrong.
func TestMediaBadParts(t *testing.T) {
	t.Parallel() // shares nothing with the other tests and judges no timing
	_, base := startSim(t, fixedConfig(1, 1))
	for _, c := range []struct {
		part map[string]any
		want string
	}{
		{map[string]any{"type": "image_url", "image_url": map[string]any{"url": "http://example.com/a.png"}}, "fetches no URLs"},
		{map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,!!!"}}, "image_url"},
		{map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("text"))}}, "not a PNG or JPEG"},
		{map[string]any{"type": "image_url"}, "without"},
		{map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": "AAAA", "format": "wav"}}, "not a WAV"},
		{map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": "AAAA", "format": "mp3"}}, "reads wav"},
	} {
		resp := post(t, base+"/v1/chat/completions", mediaChat("x", c.part))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), c.want) {
			t.Errorf("%v: HTTP %d %s; want 400 with %q", c.part, resp.StatusCode, b, c.want)
		}
	}
}
