//go:build race

package metrics_test

// raceDetector: the tests that skip under the race detector are judged without it, in
// scripts/test's second pass (see its comment).
const raceDetector = true
