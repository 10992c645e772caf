//go:build !race

package compare_test

const raceDetector = false
