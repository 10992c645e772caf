package compare

import (
	"fmt"
	"strings"
)

// OpenTails names, beside a verdict of no significant change, the metrics that did not decide
// it by their own interval, with why: medians decided at equal contention (contention.go),
// tail percentiles whose interval straddles their threshold but holds no change (neither
// blocks, see blocks). "" when every metric decided or the verdict is another.
// With it the verdict line names what decided it: every metric but these settled inside the
// threshold.
func (r *Result) OpenTails() string {
	if r.Verdict != NoChange {
		return ""
	}
	var open, equal []string
	for _, row := range r.Rows {
		if row.Change != Inconclusive {
			continue
		}
		if row.Contention.Clears(row) {
			equal = append(equal, row.Metric.Name)
		} else {
			open = append(open, row.Metric.Name)
		}
	}
	var parts []string
	if len(equal) > 0 {
		parts = append(parts, fmt.Sprintf("%s decided at equal contention (the arrivals' clustering moved it)", strings.Join(equal, ", ")))
	}
	if len(open) > 0 {
		parts = append(parts, fmt.Sprintf("%s open (a tail whose interval holds no change and straddles ±%g%%: it neither moved nor is shown unmoved)",
			strings.Join(open, ", "), 100*r.tailThreshold()))
	}
	return strings.Join(parts, "; ")
}

// tailThreshold is the threshold the tail rows were judged at.
func (r *Result) tailThreshold() float64 {
	for _, row := range r.Rows {
		if row.Metric.Tail {
			return row.Threshold
		}
	}
	return r.Threshold
}
