package load

import "time"

// ProcessCPU is the user + system CPU time this process has used so far (getrusage on unix;
// zero elsewhere). Differences of two readings give the CPU a stretch of work cost.
func ProcessCPU() time.Duration { return processCPU() }
