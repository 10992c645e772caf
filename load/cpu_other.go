//go:build !unix

package load

import "time"

// processCPU is not available on this platform: CPU figures read as zero.
func processCPU() time.Duration { return 0 }
