package compare

import (
	"fmt"

	"servebench/conditions"
)

// conditionWarnings are the footnotes about what the two sides are: simulated targets,
// conditions one side could not tell, failures.
func conditionWarnings(base, cand *Side, diffs []conditions.Difference) []string {
	var w []string
	if base.Header.Target.Simulated || cand.Header.Target.Simulated {
		w = append(w, "a side was measured against servebench's built-in simulator: these are not a real server's figures")
	}
	for _, d := range diffs {
		if d.Kind == conditions.KindUnknown {
			side := "base"
			if d.Cand.Value == "" {
				side = "candidate"
			}
			w = append(w, fmt.Sprintf("%s is unknown in the %s: whether it changed cannot be told; declare it on both runs with --condition %s=VALUE", d.Key, side, d.Key))
		}
	}
	for _, s := range []struct {
		name string
		side *Side
	}{{"base", base}, {"candidate", cand}} {
		failed, measured := 0, 0
		for _, r := range s.side.Runs() {
			failed += r.Summary.Failed
			measured += r.Summary.Measured
		}
		if failed > 0 {
			w = append(w, fmt.Sprintf("%s: %d of %d measured requests failed; failed requests are in no latency figure", s.name, failed, measured))
		}
	}
	return w
}
