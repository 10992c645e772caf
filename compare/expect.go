package compare

import (
	"servebench/conditions"
	"servebench/record"
)

// CheckExpect checks the --expect-change names against the conditions of both files and the
// ones the comparison adds (conditions.CheckExpect): a name that matches nothing would be
// ignored, and the runs called not comparable again, with no word why.
func CheckExpect(base, cand *record.Header, expect []string) error {
	if len(expect) == 0 {
		return nil
	}
	added := conditions.Set{{Key: prefixCacheKey}}
	return conditions.CheckExpect(expect, headerConditions(base), headerConditions(cand), added)
}
