//go:build !race

package deploy

// raceEnabled is false in normal builds.
const raceEnabled = false
