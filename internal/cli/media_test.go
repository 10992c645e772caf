package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"servebench/exitcode"
	"servebench/record"
	"servebench/sim"
	"servebench/workload"
)

// TestImagesRaisePromptTokensAndTTFT: a run with 2
// images of 1024×1024 per request reports the image bytes sent and the server's prompt
// tokens, and its TTFT rises against the same text-only run as the preset's rule predicts
// (Qwen2-VL: ceil(1024/28)² = 1369 tokens per image, prefilled by the roofline).
func TestImagesRaisePromptTokensAndTTFT(t *testing.T) {
	t.Parallel()
	// an L4's 121 TFLOPs make the images' prefill (~0.6 s) dwarf the simulator's own parsing
	// of 2.6 MB of base64 (tens of ms, more on a busy machine), which the rule does not cover;
	// no prefix cache, so the second run's text is prefilled again as the first run's was
	srv, url := startSimServer(t, func(c *sim.Config) {
		c.ModelPreset, c.Hardware, c.NoPrefixCache = "qwen2-vl-7b", "l4", true
	})
	dir := t.TempDir()
	common := []string{"run", "-q", "--url", url, "--api", "openai-chat", "--input-tokens", "128",
		"--output-tokens", "4", "--requests", "4", "--warmup", "1", "--concurrency", "1", "--seed", "3"}
	text, media := filepath.Join(dir, "text.jsonl"), filepath.Join(dir, "media.jsonl")
	if code, _, errs := runMain(t, append(common, "-o", text)...); code != 0 {
		t.Fatal(errs)
	}
	js := filepath.Join(dir, "media.json")
	// JPEG (about 200 KB at 1024², against 1 MB as PNG) keeps the simulator's parsing small
	code, out, errs := runMain(t, append(common, "--images", "2x1024x1024", "--image-format", "jpeg", "-o", media, "--json", js)...)
	if code != 0 {
		t.Fatal(errs)
	}
	if !strings.Contains(out, "images      8 in 4 requests (2.0 per request)") || !strings.Contains(out, "beyond the text asked: 2738.0") {
		t.Errorf("the summary does not report the images and their tokens:\n%s", out)
	}
	perImage := srv.MediaRule().ImageTokens(1024, 1024)
	if perImage != 37*37 {
		t.Fatalf("qwen2-vl rule: %d tokens for 1024×1024, want %d", perImage, 37*37)
	}
	_, ta := readRecords(t, text)
	_, tb := readRecords(t, media)
	prompts := map[int]int{}
	var ttftA, ttftB []float64
	textTokens := 0
	for _, r := range measuredOK(t, ta) {
		prompts[r.ID] = r.PromptTokens
		ttftA = append(ttftA, float64(r.Events[0].T-r.Sent))
		textTokens = r.PromptTokens
	}
	var bytesSent int64
	for _, r := range measuredOK(t, tb) {
		if r.Images != 2 || r.ImageBytes < 2*50_000 || r.PromptTokensSource != record.SourceServer {
			t.Fatalf("request %d: %d images, %d bytes, prompt tokens from %q; want 2 images of real JPEG size and the server's count",
				r.ID, r.Images, r.ImageBytes, r.PromptTokensSource)
		}
		if d := r.PromptTokens - prompts[r.ID]; d != 2*perImage {
			t.Errorf("request %d: prompt tokens %d, text-only %d: +%d, want +%d (the rule's)", r.ID, r.PromptTokens, prompts[r.ID], d, 2*perImage)
		}
		bytesSent += r.ImageBytes
		ttftB = append(ttftB, float64(r.Events[0].T-r.Sent))
	}
	var sum struct {
		Media struct {
			TotalImageBytes int64    `json:"total_image_bytes"`
			MeanMediaTokens *float64 `json:"mean_media_tokens"`
		} `json:"media"`
	}
	raw, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Media.TotalImageBytes != bytesSent || sum.Media.MeanMediaTokens == nil || *sum.Media.MeanMediaTokens != float64(2*perImage) {
		t.Errorf("JSON media: %s; want total_image_bytes %d and mean_media_tokens %d", raw, bytesSent, 2*perImage)
	}
	// the roofline's prefill time of the images' tokens on top of the text's: the rise a lone
	// request's TTFT shows (the sim's parsing of two base64 images comes on top: the upper
	// bound leaves room for it on a busy machine; the figures are in the log)
	predicted := float64(srv.PrefillStep(textTokens+2*perImage, 0) - srv.PrefillStep(textTokens, 0))
	rise := median(ttftB) - median(ttftA)
	t.Logf("TTFT p50 text %.1f ms, with images %.1f ms: rise %.1f ms, predicted %.1f ms (%d tokens)",
		median(ttftA)/1e6, median(ttftB)/1e6, rise/1e6, predicted/1e6, 2*perImage)
	slack := 400 * time.Millisecond
	if raceDetector {
		slack = 2 * time.Second // the race detector slows the simulator's JSON decoding ~10×
	}
	if rise < 0.8*predicted || rise > 1.2*predicted+float64(slack) {
		t.Errorf("TTFT rose %.1f ms with the images; the rule predicts %.1f ms", rise/1e6, predicted/1e6)
	}
}

// measuredOK returns the measured records, failing the test on any failure.
func measuredOK(t *testing.T, rs []record.Record) []record.Record {
	t.Helper()
	var out []record.Record
	for _, r := range rs {
		if !r.Measured() {
			continue
		}
		if !r.OK() || len(r.Events) == 0 {
			t.Fatalf("request %d failed: %s %s", r.ID, r.ErrorClass, r.Error)
		}
		out = append(out, r)
	}
	return out
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// TestAudioAndImageFiles: audio clips and images from a folder reach the simulator and are
// costed by its rule (25 tokens per second of audio; the tile rule of a text preset), and
// run --like replays the very media from the header's recipes.
func TestAudioAndImageFiles(t *testing.T) {
	t.Parallel()
	srv, url := startSimServer(t, func(c *sim.Config) { c.TTFT, c.ITL = 5*time.Millisecond, time.Millisecond })
	dir := t.TempDir()
	imgs := filepath.Join(dir, "imgs")
	if err := os.Mkdir(imgs, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, size := range [][2]int{{300, 200}, {640, 480}} {
		b, err := workload.SyntheticImage(size[0], size[1], []string{"png", "jpeg"}[i], uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(imgs, []string{"a.png", "b.jpg"}[i]), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := filepath.Join(dir, "a.jsonl")
	args := []string{"run", "-q", "--url", url, "--input-tokens", "16", "--output-tokens", "2", "--requests", "4",
		"--warmup", "0", "--concurrency", "1", "--images", "1", "--image-files", imgs, "--audio", "2s", "-o", a}
	if code, _, errs := runMain(t, args...); code != 0 {
		t.Fatal(errs)
	}
	h, rs := readRecords(t, a)
	rule := srv.MediaRule()
	want := map[int]int{300: rule.ImageTokens(300, 200), 640: rule.ImageTokens(640, 480)}
	if h.Target.API != "openai-chat" {
		t.Errorf("api %q: --images should pick openai-chat", h.Target.API)
	}
	for i, r := range measuredOK(t, rs) {
		if r.Images != 1 || r.AudioClips != 1 || r.AudioMS != 2000 || r.AudioBytes != 44+2*2*workload.WAVRate {
			t.Errorf("request %d: %+v", r.ID, r)
		}
		w := []int{300, 640}[i%2] // the folder's files in name order, in turn
		if d := r.PromptTokens - r.InputTokens; d != want[w]+rule.AudioTokens(2000) {
			t.Errorf("request %d: %d tokens beyond the text, want %d (image %d wide) + %d (2 s audio)", r.ID, d, want[w], w, rule.AudioTokens(2000))
		}
	}
	b := filepath.Join(dir, "b.jsonl")
	if code, _, errs := runMain(t, "run", "-q", "--url", url, "--like", a, "-o", b); code != 0 {
		t.Fatal(errs)
	}
	hb, rb := readRecords(t, b)
	if hb.Workload.Hash != h.Workload.Hash {
		t.Errorf("--like: workload hash %s, baseline %s", hb.Workload.Hash, h.Workload.Hash)
	}
	for i, r := range measuredOK(t, rb) {
		if r.PromptTokens != rs[i].PromptTokens || r.ImageBytes != rs[i].ImageBytes {
			t.Errorf("--like request %d: %d tokens, %d image bytes; baseline %d, %d", r.ID, r.PromptTokens, r.ImageBytes, rs[i].PromptTokens, rs[i].ImageBytes)
		}
	}
	if len(h.Workload.Requests) > 64<<10 {
		t.Errorf("the embedded workload is %d bytes: media must travel as recipes, not bytes", len(h.Workload.Requests))
	}
}

// TestMediaBadInput: a bad size, an unreadable folder, a non-image file, an API that cannot
// carry media: exit 2 with one line naming what is wrong, before any request.
func TestMediaBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notImage := filepath.Join(dir, "notes")
	if err := os.Mkdir(notImage, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notImage, "readme.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "list.jsonl")
	if err := os.WriteFile(list, []byte(`{"path": "missing.png"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withMedia := filepath.Join(dir, "prompts.jsonl")
	line := `{"prompt": "hi", "media": [{"type": "image", "format": "png", "width": 8, "height": 8, "gen": "` + workload.MediaGen + `", "seed": 1}]}`
	if err := os.WriteFile(withMedia, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := startSim(t, nil)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--images", "2x0x10"}, "--images"},
		{[]string{"--images", "2x9000x10"}, "8192"},
		{[]string{"--images", "65x64x64"}, "64"},
		{[]string{"--images", "2xfoo"}, "--images"},
		{[]string{"--images", "2"}, "--image-files"},
		{[]string{"--images", "2x64x64", "--image-format", "gif"}, "--image-format"},
		{[]string{"--images", "1", "--image-files", filepath.Join(dir, "nope")}, "nope"},
		{[]string{"--images", "1", "--image-files", notImage}, "readme.txt: not a PNG or JPEG image"},
		{[]string{"--images", "1", "--image-files", list}, "missing.png"},
		{[]string{"--images", "2x64x64", "--api", "openai-completions"}, "--api openai-chat"},
		{[]string{"--audio", "0s"}, "--audio"},
		{[]string{"--audio", "11m"}, "--audio"},
		{[]string{"--audio", "64x10m"}, "more than 10m0s of audio per request"},
		{[]string{"--audio", "2x5m1s"}, "more than 10m0s of audio per request"},
		{[]string{"--images", "8192x8192", "--concurrency", "64"}, "4 GiB"},
		{[]string{"--audio", "10m", "--rate", "5", "--max-concurrency", "1000"}, "4 GiB"},
		{[]string{"--prompts", withMedia}, "need --api openai-chat"},
	} {
		args := append([]string{"run", "-q", "--url", url, "--requests", "2", "-o", filepath.Join(dir, "x.jsonl")}, c.args...)
		code, _, errs := runMain(t, args...)
		if code != exitcode.Usage || !strings.Contains(errs, c.want) || strings.Count(withoutBuildNotice(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, errs, c.want)
		}
	}
}
