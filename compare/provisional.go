package compare

import (
	"fmt"
	"strings"

	"servebench/metrics"
)

// provisional are the reasons a verdict holds only provisionally: a side with a run that was
// not steady (its steady-state check found a drift or a growing queue: a difference may be the
// drift), a run its validity rules judged INVALID, or a run with a warning that invalidates its
// figures (prefix-cache hits, a run that ended still warming). nil when neither side has one.
func provisional(br, cr []metrics.RunSummary) []string {
	var why []string
	for _, s := range []struct {
		name string
		runs []metrics.RunSummary
	}{{"base", br}, {"candidate", cr}} {
		if d := drifted(s.runs); d != "" {
			why = append(why, fmt.Sprintf("%s not steady (%s)", s.name, d))
		}
		if v := invalid(s.runs); v != "" {
			why = append(why, fmt.Sprintf("%s invalid (%s)", s.name, v))
		}
	}
	return why
}

// invalid names the runs that their validity rules or an invalidating warning invalidate.
func invalid(runs []metrics.RunSummary) string {
	var names []string
	for _, r := range runs {
		var what []string
		for _, e := range r.Summary.Ends {
			if v := e.Validity; v != nil && strings.EqualFold(v.Verdict, "invalid") {
				what = append(what, "INVALID under "+v.Rules)
			}
		}
		for _, w := range r.Summary.Invalid() {
			what = append(what, w.Reason())
		}
		if len(what) > 0 {
			names = append(names, fmt.Sprintf("run %d: %s", r.Run+1, strings.Join(what, "; ")))
		}
	}
	return strings.Join(names, ", ")
}
