package bench

import (
	"encoding/json"
	"fmt"

	"servebench/runspec"
	"servebench/workload"
)

// lazy reports whether n synthetic prompts of about in tokens (±ratio) are kept as their
// recipes only (workload.LazyBytes says why).
func lazy(n, in int, ratio float64) bool {
	return workload.TextBytes(n, float64(in)*(1+ratio)) > workload.LazyBytes
}

// hashWorkload is the workload's identity (workload.Hash of the first part with the
// settings) and, in the same pass, the sha256 of every part's encoding, which the header's
// recipe carries: a lazy workload's prompts are rebuilt once for both.
func (b *Session) hashWorkload(ws workloadSettings) (string, error) {
	hash, all, err := workload.Hashes(b.reqs, len(b.parts[0].reqs), ws)
	b.reqsSHA = all
	return hash, err
}

// embedPrompts puts the workload in the header for run --like: a synthetic workload as its
// recipe and the hash of the text it rebuilds (a few KB, where 1,000 prompts of 128k tokens
// are about 670 MB of text), any other (a prompts file, a dataset, sessions) as its text.
func (b *Session) embedPrompts() error {
	rc, ok := workload.RecipeOf(b.reqs, b.reqsSHA)
	if !ok {
		var err error
		b.hdr.Workload.Requests, err = runspec.EncodeRequests(b.reqs)
		return err
	}
	raw, err := json.Marshal(rc)
	if err != nil {
		return fmt.Errorf("encode the workload recipe: %w", err)
	}
	b.hdr.Workload.Recipe = raw
	return nil
}
