// Package exitcode defines servebench's exit codes, the one place they are numbered. Each
// code's full meaning is in docs/exit-codes.md and, shorter, in README.md "Exit codes"; a test
// keeps both tables and this list the same set.
//
// It imports nothing of servebench's, so every layer that decides a code (compare's verdict,
// the CLI's errors) can name it without importing the layer above.
package exitcode

const (
	// OK is success: failed requests are data in the records, not an exit code, as long as
	// some succeeded.
	OK = 0
	// Error is a tool error: server not ready, unreadable or unwritable file, a failed write,
	// or a run in which every request failed.
	Error = 1
	// Usage is a usage error: bad flag or config value, an output over an input, compare of a
	// file with itself; always before any request is sent.
	Usage = 2
	// SLO is an SLO gate (run --fail-below) that was not met.
	SLO = 3
	// Regression is compare's verdict that the candidate regressed on a key metric.
	Regression = 4
	// NotComparable is compare's verdict that a fixed condition changed without
	// --expect-change.
	NotComparable = 5
	// Inconclusive is compare's verdict that no metric changed clearly and some metric's
	// interval straddles the threshold.
	Inconclusive = 6
	// Invalid is a run or sweep point INVALID under its validity rules or by a warning that
	// invalidates a figure, or an auto sweep whose points cannot be ordered by load.
	Invalid = 7
	// Nothing is compare's verdict that a side measured nothing: no completed measured
	// request, or no key metric could be compared.
	Nothing = 8
	// Provisional is compare's verdict when a side was not steady or is invalid, whatever
	// the verdict was.
	Provisional = 9
	// Interrupted is Ctrl-C (or SIGTERM) before a run started, while its inputs were read:
	// nothing was measured. A run stopped once sending has begun ends as it would have.
	Interrupted = 130
)

// All lists every code, in increasing order.
var All = []int{OK, Error, Usage, SLO, Regression, NotComparable, Inconclusive, Invalid, Nothing, Provisional, Interrupted}
