package bench

import (
	"servebench/runspec"
	"servebench/workload"
)

// attachMedia gives every request of every part the images and audio clips the spec asks for
// (--images, --image-files, --audio), as recipes: the bytes are made when each request is
// sent (load renders them), so the workload, its hash and the embedded copy stay small.
// Requests that already carry media (a prompts file's or a baseline's) keep theirs.
func (b *Session) attachMedia() error {
	s := &b.spec
	p, err := s.MediaPlan()
	if err != nil || p.Empty() {
		return err
	}
	if s.ImageFiles != "" {
		if p.Files, err = workload.ImageFiles(s.ImageFiles); err != nil {
			return runspec.Usagef("--image-files: %v", err)
		}
	}
	first := 0
	for i := range b.parts {
		reqs := b.parts[i].reqs
		p.Attach(reqs, s.Seed, first)
		first += len(reqs)
		for j := range reqs {
			if err := workload.CheckMedia(reqs[j].Media); err != nil {
				return runspec.Usagef("--images/--audio: request %d: %v", j, err)
			}
		}
	}
	return nil
}
