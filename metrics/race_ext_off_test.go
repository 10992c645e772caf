//go:build !race

package metrics_test

const raceDetector = false
