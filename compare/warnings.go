package compare

import (
	"fmt"
	"strings"

	"servebench/conditions"
	"servebench/metrics"
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
		if runs := drifted(s.side.Runs()); runs != "" {
			w = append(w, fmt.Sprintf("%s was not steady (%s): a difference may be the drift, not the change; find the cause (warmup, throttling, a queue above capacity) and measure again", s.name, runs))
		}
	}
	return w
}

// drifted names the runs whose steady-state check found a drift or a growing queue.
func drifted(runs []metrics.RunSummary) string {
	var names []string
	for _, r := range runs {
		st := r.Summary.Steadiness
		if st == nil || !st.Tested || st.Steady {
			continue
		}
		what := "drift"
		if st.Queueing {
			what = "unbounded queueing"
		} else if len(st.Drifts) > 0 {
			what = st.Drifts[0].Metric + " " + st.Drifts[0].Direction
		}
		names = append(names, fmt.Sprintf("run %d: %s", r.Run+1, what))
	}
	return strings.Join(names, ", ")
}
