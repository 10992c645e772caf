package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of JPEG files
	_ "image/png"  // DecodeConfig of PNG files
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxImageFiles bounds the list of image files a run reads (their recipes stay in memory).
const MaxImageFiles = 100000

// MediaPlan says which media every request of a workload carries: Images images each (of
// Width×Height in Format, or taken in turn from Files), and Audio clips of AudioMS each.
type MediaPlan struct {
	Images        int
	Width, Height int
	Format        string  // png or jpeg, for synthetic images
	Files         []Media // image files, used in turn
	Audio         int
	AudioMS       int64
}

// Empty reports whether the plan adds nothing.
func (p *MediaPlan) Empty() bool { return p == nil || p.Images == 0 && p.Audio == 0 }

// Attach gives every request of reqs that has no media of its own the plan's media. first is
// the index of reqs[0] among all requests the run builds (its earlier parts included), so that
// every request of every part gets its own synthetic seeds and the next files in turn.
func (p *MediaPlan) Attach(reqs []Request, seed int64, first int) {
	if p.Empty() {
		return
	}
	base := splitmix(uint64(seed) ^ 0x6d65646961) // "media": apart from the prompt's seed
	for i := range reqs {
		r := &reqs[i]
		if len(r.Media) > 0 {
			continue
		}
		n := first + i
		r.Media = make([]Media, 0, p.Images+p.Audio)
		for k := range p.Images {
			if len(p.Files) > 0 {
				r.Media = append(r.Media, p.Files[(n*p.Images+k)%len(p.Files)])
				continue
			}
			r.Media = append(r.Media, Media{Type: MediaImage, Format: p.Format, Width: p.Width, Height: p.Height,
				Gen: MediaGen, Seed: splitmix(base ^ uint64(n)<<8 ^ uint64(k))})
		}
		for k := range p.Audio {
			r.Media = append(r.Media, Media{Type: MediaAudio, Format: "wav", MS: p.AudioMS,
				Gen: MediaGen, Seed: splitmix(base ^ uint64(n)<<8 ^ uint64(128+k))})
		}
	}
}

// ImageFiles lists the images of path: every file of a folder (not its subfolders; hidden
// files skipped), in name order, or the files a JSONL file names, one per line as
// {"path": "a.png"} or "a.png" (relative to the JSONL file's folder). Each file must be a PNG
// or JPEG image of at most MaxImageSide pixels a side and MaxMediaFileBytes; each is read once
// here for its size and content hash. An error names the file at fault.
func ImageFiles(path string) ([]Media, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	var paths []string
	if st.IsDir() {
		paths, err = dirFiles(path)
	} else {
		paths, err = listedFiles(path)
	}
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no image files", path)
	}
	if len(paths) > MaxImageFiles {
		return nil, fmt.Errorf("%s: more than %d image files", path, MaxImageFiles)
	}
	out := make([]Media, len(paths))
	for i, p := range paths {
		if out[i], err = imageFile(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func dirFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	slices.Sort(out)
	return out, nil
}

func listedFiles(list string) ([]string, error) {
	f, err := os.Open(list)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", list, err)
	}
	defer f.Close()
	dir := filepath.Dir(list)
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		p, err := listedPath(b)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", list, line, err)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		out = append(out, p)
		if len(out) > MaxImageFiles {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", list, err)
	}
	return out, nil
}

// listedPath reads one line of an image list: {"path": "..."} or a JSON string.
func listedPath(b []byte) (string, error) {
	var obj struct {
		Path string `json:"path"`
	}
	var s string
	switch {
	case json.Unmarshal(b, &s) == nil:
	case json.Unmarshal(b, &obj) == nil:
		s = obj.Path
	default:
		return "", errors.New(`want {"path": "..."} or a JSON string`)
	}
	if s == "" {
		return "", errors.New("empty path")
	}
	return s, nil
}

// imageFile reads one image file for its format, size and content hash.
func imageFile(path string) (Media, error) {
	b, err := readMediaFile(path, "")
	if err != nil {
		return Media{}, err
	}
	format := sniffImage(b)
	if format == "" {
		return Media{}, fmt.Errorf("%s: not a PNG or JPEG image", path)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return Media{}, fmt.Errorf("%s: %v", path, err)
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxImageSide || cfg.Height > MaxImageSide {
		return Media{}, fmt.Errorf("%s: %dx%d: sides must be 1 to %d", path, cfg.Width, cfg.Height, MaxImageSide)
	}
	return Media{Type: MediaImage, Format: format, Width: cfg.Width, Height: cfg.Height,
		Path: path, SHA256: contentHash(b)}, nil
}
