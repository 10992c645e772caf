package runspec

import (
	"encoding/json"

	"servebench/workload"
)

// fromRecipe rebuilds the baseline's synthetic prompts from the recipe its header carries,
// exactly: the text they rebuild must hash to the recipe's sha256, or --like refuses the file
// (a servebench that builds prompts differently, or a damaged header) instead of measuring
// another workload. The requests stay lazy: their text is rebuilt when sent.
func (b *Base) fromRecipe() error {
	h := b.Header
	var rc workload.HeaderRecipe
	if err := json.Unmarshal(h.Workload.Recipe, &rc); err != nil {
		return Usagef("--like %s: its prompt recipe: %v", b.Path, err)
	}
	reqs, err := rc.Requests()
	if err != nil {
		return Usagef("--like %s: %v", b.Path, err)
	}
	b.Requests, b.Exact = reqs, h.Workload.PromptLengths == "exact"
	return nil
}
