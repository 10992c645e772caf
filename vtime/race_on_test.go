//go:build race

package vtime

// raceEnabled: the tests that skip under the race detector are judged without it, in
// scripts/test's second pass (see its comment).
const raceEnabled = true
