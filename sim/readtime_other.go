//go:build !linux

package sim

import "net"

// arrivalClock returns nil: kernel receive times are read on Linux only.
func arrivalClock(net.Conn) func() int64 { return nil }
