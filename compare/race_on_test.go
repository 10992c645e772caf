//go:build race

package compare

// raceEnabled widens wall-clock tolerances: the race detector slows every goroutine several
// times over, so on a shared 2-core machine timings reflect the instrumentation, not the sim.
const raceEnabled = true
