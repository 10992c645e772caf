package bench

import (
	"encoding/json"
	"fmt"

	"servebench/runspec"
	"servebench/workload"
)

// embedPrompts puts the workload in the header for run --like: a synthetic workload as its
// recipe and the hash of the text it rebuilds (a few KB, where 1,000 prompts of 128k tokens
// are about 670 MB of text), any other (a prompts file, a dataset, sessions) as its text.
func (b *Session) embedPrompts() error {
	rc, ok, err := workload.RecipeOf(b.reqs)
	if err != nil {
		return fmt.Errorf("hash the workload: %w", err)
	}
	if !ok {
		b.hdr.Workload.Requests, err = runspec.EncodeRequests(b.reqs)
		return err
	}
	b.hdr.Workload.Recipe, err = json.Marshal(rc)
	return err
}
