//go:build !race

package vtime

// raceEnabled is false in normal builds.
const raceEnabled = false
