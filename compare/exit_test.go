package compare

import (
	"testing"

	"servebench/exitcode"
)

// compare's exit codes: not comparable and measured nothing first, then provisional whatever
// the verdict, then regressed and inconclusive.
func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		verdict     string
		provisional bool
		want        int
	}{
		{NoChange, false, exitcode.OK}, {Improved, false, exitcode.OK}, {Regressed, false, exitcode.Regression},
		{NotComparable, true, exitcode.NotComparable}, {Inconclusive, false, exitcode.Inconclusive},
		{MeasuredNothing, true, exitcode.Nothing},
		{Improved, true, exitcode.Provisional}, {Regressed, true, exitcode.Provisional}, {NoChange, true, exitcode.Provisional},
	} {
		r := &Result{Verdict: c.verdict}
		if c.provisional {
			r.Provisional = []string{"candidate not steady (run 0: ttft rising)"}
		}
		if got := r.ExitCode(); got != c.want {
			t.Errorf("%s, provisional %v: exit %d, want %d", c.verdict, c.provisional, got, c.want)
		}
	}
}
