//go:build !race

package workload

// raceEnabled is false in normal builds: the long-context test builds its full-size prompts.
const raceEnabled = false
