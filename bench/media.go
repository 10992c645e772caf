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
	if err != nil {
		return err
	}
	if p.Empty() {
		return b.checkMediaAPI()
	}
	if s.ImageFiles != "" {
		if p.Files, err = workload.ImageFiles(s.ImageFiles); err != nil {
			return runspec.Usagef("--image-files: %v", err)
		}
	}
	b.media = p
	for i := range b.parts {
		if err := b.attachPartMedia(b.parts[i].reqs); err != nil {
			return err
		}
	}
	return nil
}

// attachPartMedia gives the requests of the next part the media plan's items (none without
// one): each request's synthetic seeds and files follow on from the parts before.
func (b *Session) attachPartMedia(reqs []workload.Request) error {
	p := b.media
	if p.Empty() {
		return nil
	}
	p.Attach(reqs, b.spec.Seed, b.mediaFirst)
	b.mediaFirst += len(reqs)
	for j := range reqs {
		if err := workload.CheckMedia(reqs[j].Media); err != nil {
			return runspec.Usagef("--images/--audio: request %d: %v", j, err)
		}
	}
	return nil
}

// checkMediaAPI refuses a workload whose requests carry media of their own (a prompts file's
// "media", a baseline's) when the API cannot send them: they would be dropped unseen.
func (b *Session) checkMediaAPI() error {
	if b.spec.API == "openai-chat" {
		return nil
	}
	for _, pt := range b.parts {
		for _, r := range pt.reqs {
			if len(r.Media) > 0 {
				return runspec.Usagef("the workload's requests carry images or audio: they need --api openai-chat, not %s", b.spec.API)
			}
		}
	}
	return nil
}
