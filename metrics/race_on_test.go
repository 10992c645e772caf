//go:build race

package metrics

// raceEnabled: the tests that skip under the race detector are judged without it, in
// scripts/test's second pass (see its comment): one goroutine, many times the time under it.
const raceEnabled = true
