//go:build race

package compare_test

// raceDetector: the recorded sets are judged by one goroutine, so the race detector finds
// nothing there and only multiplies their time by ten (30 s to 330 s on 2 cores); they are
// judged without it (scripts/test's second line).
const raceDetector = true
