//go:build race

package deploy

// raceEnabled: the test binary was built with the race detector, and so is TestMain's
// servebench, which then shares its compiled packages.
const raceEnabled = true
