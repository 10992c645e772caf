//go:build !linux

package load

import "time"

// sleepFine sleeps d; only Linux has a finer sleep than Go's timers (ontime_linux.go).
func sleepFine(d time.Duration) { time.Sleep(d) }
