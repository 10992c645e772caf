//go:build race

package workload

// raceEnabled: the tests that skip under the race detector (huge inputs read or built by one
// goroutine) run without it, in scripts/test's second pass (see its comment).
const raceEnabled = true
