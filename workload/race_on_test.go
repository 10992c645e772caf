//go:build race

package workload

// raceEnabled shortens the long-context test: the race detector slows building 670 MB of
// prompts tenfold, and the recipe's size does not depend on the prompts' length.
const raceEnabled = true
