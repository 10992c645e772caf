//go:build !race

package compare

// raceEnabled is false in normal builds: the full-size simulation runs.
const raceEnabled = false
