package workload

import (
	"bytes"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyntheticImage: a recipe makes the same decodable image of the asked size every time,
// and another seed another image.
func TestSyntheticImage(t *testing.T) {
	for _, f := range []string{"png", "jpeg"} {
		a, err := SyntheticImage(300, 200, f, 7)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := SyntheticImage(300, 200, f, 7)
		c, _ := SyntheticImage(300, 200, f, 8)
		if !bytes.Equal(a, b) || bytes.Equal(a, c) {
			t.Errorf("%s: same seed equal %v, other seed equal %v; want true, false", f, bytes.Equal(a, b), bytes.Equal(a, c))
		}
		cfg, got, err := image.DecodeConfig(bytes.NewReader(a))
		if err != nil || got != f || cfg.Width != 300 || cfg.Height != 200 {
			t.Errorf("%s: decoded %s %dx%d, %v", f, got, cfg.Width, cfg.Height, err)
		}
	}
	if _, err := SyntheticImage(0, 10, "png", 1); err == nil {
		t.Error("0x10: no error")
	}
	if _, err := SyntheticImage(10, 10, "gif", 1); err == nil {
		t.Error("gif: no error")
	}
}

func TestSyntheticWAV(t *testing.T) {
	w := SyntheticWAV(1500, 3)
	if len(w) != 44+2*24000 || string(w[:4]) != "RIFF" || string(w[36:40]) != "data" {
		t.Fatalf("1.5 s clip: %d bytes, header %q", len(w), w[:44])
	}
	if bytes.Equal(w, SyntheticWAV(1500, 4)) || !bytes.Equal(w, SyntheticWAV(1500, 3)) {
		t.Error("clips are not a function of their seed")
	}
}

// TestAttachMedia: every request gets its own seeds, across parts too; files go in turn; a
// request with media of its own keeps them.
func TestAttachMedia(t *testing.T) {
	p := &MediaPlan{Images: 2, Width: 64, Height: 32, Format: "png", Audio: 1, AudioMS: 500}
	reqs := make([]Request, 3)
	reqs[2].Media = []Media{{Type: MediaAudio, Format: "wav", MS: 1, Gen: MediaGen}}
	p.Attach(reqs[:2], 1, 0)
	more := make([]Request, 1)
	p.Attach(more, 1, 2)
	seen := map[uint64]bool{}
	for _, r := range []Request{reqs[0], reqs[1], more[0]} {
		if len(r.Media) != 3 || r.Media[0].Width != 64 || r.Media[2].MS != 500 {
			t.Fatalf("media %+v", r.Media)
		}
		for _, m := range r.Media {
			if seen[m.Seed] {
				t.Errorf("seed %d used twice", m.Seed)
			}
			seen[m.Seed] = true
		}
	}
	p.Attach(reqs[2:], 1, 2)
	if len(reqs[2].Media) != 1 {
		t.Errorf("a request's own media were replaced: %+v", reqs[2].Media)
	}
	files := &MediaPlan{Images: 1, Files: []Media{{Path: "a"}, {Path: "b"}, {Path: "c"}}}
	fr := make([]Request, 4)
	files.Attach(fr, 1, 0)
	var got []string
	for _, r := range fr {
		got = append(got, r.Media[0].Path)
	}
	if strings.Join(got, "") != "abca" {
		t.Errorf("files in turn: %v", got)
	}
}

// TestImageFiles: a folder's images in name order with their sizes and hashes; a JSONL list
// relative to its folder; a file that is not an image or is missing named in the error; a
// file changed after the workload was built refused when sent.
func TestImageFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	png, _ := SyntheticImage(40, 30, "png", 1)
	jpg, _ := SyntheticImage(20, 10, "jpeg", 2)
	write("b.png", png)
	write("a.jpg", jpg)
	write(".hidden", []byte("x"))
	ms, err := ImageFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Format != "jpeg" || ms[0].Width != 20 || ms[1].Format != "png" || ms[1].Height != 30 || !strings.HasPrefix(ms[1].SHA256, "sha256:") {
		t.Fatalf("%+v", ms)
	}
	write("list.jsonl", []byte("{\"path\": \"b.png\"}\n\n\"a.jpg\"\n"))
	if ls, err := ImageFiles(filepath.Join(dir, "list.jsonl")); err != nil || len(ls) != 2 || ls[0].Path != filepath.Join(dir, "b.png") {
		t.Errorf("list: %+v, %v", ls, err)
	}
	rs, err := Render(ms)
	if err != nil || !bytes.Equal(rs[1].Data, png) {
		t.Fatalf("render: %v", err)
	}
	write("b.png", jpg)
	if _, err := Render(ms); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("a changed file: %v", err)
	}
	write("c.txt", []byte("not an image"))
	if _, err := ImageFiles(dir); err == nil || !strings.Contains(err.Error(), "c.txt: not a PNG or JPEG") {
		t.Errorf("a text file: %v", err)
	}
	write("bad.jsonl", []byte("{\"path\": 3}\n"))
	if _, err := ImageFiles(filepath.Join(dir, "bad.jsonl")); err == nil || !strings.Contains(err.Error(), "bad.jsonl:1") {
		t.Errorf("a bad list line: %v", err)
	}
	if _, err := ImageFiles(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing folder: no error")
	}
}

// TestMediaInPromptsFile: media recipes travel in the prompts-file encoding (saved, embedded,
// hashed) and bad ones are refused with the line.
func TestMediaInPromptsFile(t *testing.T) {
	reqs := []Request{{Messages: []Message{{Role: "user", Content: "hi"}}, OutputTokens: 3,
		Media: []Media{{Type: MediaImage, Format: "png", Width: 8, Height: 8, Gen: MediaGen, Seed: 9}}}}
	var b bytes.Buffer
	if err := Encode(&b, reqs); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&b, "x", 1)
	if err != nil || len(back) != 1 || len(back[0].Media) != 1 || back[0].Media[0].Seed != 9 {
		t.Fatalf("%+v %v", back, err)
	}
	h1, _ := Hash(reqs, nil)
	reqs[0].Media[0].Seed = 10
	if h2, _ := Hash(reqs, nil); h1 == h2 {
		t.Error("the hash does not cover the media recipe")
	}
	for _, bad := range []string{
		`{"prompt": "x", "media": [{"type": "image", "format": "gif", "gen": "g", "width": 1, "height": 1}]}`,
		`{"prompt": "x", "media": [{"type": "image", "format": "png", "gen": "g", "width": 9000, "height": 1}]}`,
		`{"prompt": "x", "media": [{"type": "video", "format": "mp4", "gen": "g"}]}`,
		`{"prompt": "x", "media": [{"type": "audio", "format": "wav"}]}`,
	} {
		if _, err := Read(strings.NewReader(bad), "p.jsonl", 1); err == nil || !strings.Contains(err.Error(), "p.jsonl:1") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// BenchmarkSyntheticImage is the client's cost of one 1024×1024 image, paid before each
// request is dispatched (client queue time).
func BenchmarkSyntheticImage(b *testing.B) {
	for _, f := range []string{"png", "jpeg"} {
		b.Run(f, func(b *testing.B) {
			var n uint64
			for b.Loop() {
				n++
				if _, err := SyntheticImage(1024, 1024, f, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
