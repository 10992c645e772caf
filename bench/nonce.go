package bench

import (
	"servebench/runspec"
	"servebench/workload"
)

// pickNonce is the nonce this invocation mixes into the prompt text it generates (see
// workload.NewNonce): a --like replay's baseline's, so its text is rebuilt exactly; none for
// text the user gave (a prompts file, a ShareGPT conversation: the nonce would change what
// they asked to send); none for a shard, whose pods must build the same
// workload and share no randomness (give them all one --nonce HEX for text of their own);
// else what --nonce says, a fresh draw by default.
func (b *Session) pickNonce() (uint64, error) {
	s := &b.spec
	if like := b.opt.Like; like != nil && !like.Rebuilt {
		return workload.ParseNonce(like.Header.Workload.Nonce)
	}
	if format, _ := s.DatasetOf(); s.Prompts != "" || format == "sharegpt" || format == "answers" {
		return 0, nil
	}
	switch s.Nonce {
	case "off":
		return 0, nil
	case "", "fresh":
		if s.Shard != "" {
			return 0, nil
		}
		return workload.NewNonce(), nil
	}
	n, err := workload.ParseNonce(s.Nonce)
	if err != nil {
		return 0, runspec.Usagef("--nonce: %v", err)
	}
	return n, nil
}
