//go:build !(linux && (amd64 || arm64))

package client

import "net"

// kernelClocks returns c: kernel receive and send times are read on Linux (amd64, arm64) only.
func kernelClocks(c net.Conn, _ Clocks) net.Conn { return c }

// KernelArrivalsSupported reports whether this platform stamps events with kernel receive
// times (and requests with kernel send times).
const KernelArrivalsSupported = false
