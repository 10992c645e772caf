package compare

import (
	"fmt"
	"strings"
)

// OpenTails names, beside a verdict of no significant change, the metrics that did not decide
// it by their own interval, with why: medians decided at equal contention (contention.go),
// tail percentiles whose interval straddles their threshold but holds no change, tails that
// moved in our measurement only, tails whose move alone is significant but not once the
// tails are one family (none of these block, see blocks). "" when every metric decided or the verdict is another.
// With it the verdict line names what decided it: every metric but these settled inside the
// threshold.
func (r *Result) OpenTails() string {
	if r.Verdict != NoChange {
		return ""
	}
	var open, cleared, equal, chance []string
	for _, row := range r.Rows {
		if row.Change != Inconclusive {
			continue
		}
		if row.Contention.Clears(row) {
			equal = append(equal, row.Metric.Name)
		} else if row.Significant && row.ServerSteady != nil {
			cleared = append(cleared, row.Metric.Name)
		} else if row.Metric.Tail && row.Significant && !row.moved {
			chance = append(chance, fmt.Sprintf("%s (p=%.2g alone, %.2g over the %d tails)", row.Metric.Name, row.P, row.FamilyP, r.judgedTails()))
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
	if len(cleared) > 0 {
		parts = append(parts, fmt.Sprintf("%s moved in our measurement only (the server's own p99 stayed put)", strings.Join(cleared, ", ")))
	}
	if len(chance) > 0 {
		parts = append(parts, fmt.Sprintf("%s moved within what chance gives one of %d tails (Holm's step-down at %g%%)",
			strings.Join(chance, ", "), r.judgedTails(), 100*r.Alpha))
	}
	return strings.Join(parts, "; ")
}

// judgedTails counts the tail rows that were judged (the family of tailFamily).
func (r *Result) judgedTails() int {
	n := 0
	for _, row := range r.Rows {
		if row.judgedTail() {
			n++
		}
	}
	return n
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
