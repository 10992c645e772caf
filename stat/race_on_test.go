//go:build race

package stat

// raceEnabled: the tests that skip under the race detector are judged without it, in
// scripts/test's second pass (see its comment).
const raceEnabled = true
