//go:build race

package cli

// raceDetector is true when the tests run under -race, which slows every goroutine several
// times over: timing assertions widen their bounds then.
const raceDetector = true
