package bench

import (
	"fmt"
	"strings"

	"servebench/metrics"
	"servebench/validity"
)

// InvalidError is a run INVALID under the validity rules (--valid) or by a warning that
// invalidates one of its figures.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// Verdict applies a finished run's gates in turn: the SLO gate (--fail-below: a *GateError;
// msg is its line, also when it passed), then the validity rules and the invalidating
// warnings (an *InvalidError). The first that fails is the error.
func Verdict(failBelow string, res *Result) (msg string, err error) {
	if msg, err = Gate(failBelow, res.Runs); err != nil {
		return msg, err
	}
	if bad := validity.Invalid(res.Header.Ends); len(bad) > 0 {
		return msg, &InvalidError{"INVALID under the validity rules: " + strings.Join(bad, " | ")}
	}
	if bad := invalidRuns(res.Runs); bad != "" {
		return msg, &InvalidError{"INVALID: " + bad}
	}
	return msg, nil
}

// invalidRuns says which runs their warnings invalidate ("" for none): the first, by its
// first invalidating warning, and how many more.
func invalidRuns(runs []metrics.RunSummary) string {
	var first string
	n := 0
	for _, r := range runs {
		if bad := r.Summary.Invalid(); len(bad) > 0 {
			if n == 0 {
				first = bad[0].Reason()
				if len(runs) > 1 {
					first = fmt.Sprintf("run %d: %s", r.Run, first)
				}
			}
			n++
		}
	}
	switch {
	case n == 0:
		return ""
	case n > 1:
		first += fmt.Sprintf(" (and %d more runs)", n-1)
	}
	return first + "; its figures are printed with the warning, but no conclusion rests on them"
}
