//go:build race

package compare

// raceEnabled: the rate tests skip under the race detector, which slows each side's
// bootstrap about tenfold and has nothing to find in this package's one goroutine; they run
// without it, at full size, in scripts/test's second pass (see its comment).
const raceEnabled = true
