//go:build !race

package stat

// raceEnabled is false in normal builds.
const raceEnabled = false
