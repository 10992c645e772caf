//go:build !race

package sim

// raceEnabled is false in normal builds: the strict accuracy tolerances apply.
const raceEnabled = false
