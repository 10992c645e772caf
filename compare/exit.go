package compare

import "servebench/exitcode"

// ExitCode is the exit code `servebench compare` gives this result (docs/exit-codes.md): not
// comparable and measured nothing first, as no verdict was reached; then provisional,
// whatever the verdict, so a gate never passes on a side that was not steady or is invalid;
// then regressed and inconclusive; every other verdict is success.
func (r *Result) ExitCode() int {
	switch r.Verdict {
	case NotComparable:
		return exitcode.NotComparable
	case MeasuredNothing:
		return exitcode.Nothing
	}
	if len(r.Provisional) > 0 {
		return exitcode.Provisional
	}
	switch r.Verdict {
	case Regressed:
		return exitcode.Regression
	case Inconclusive:
		return exitcode.Inconclusive
	}
	return exitcode.OK
}
