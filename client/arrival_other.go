//go:build !(linux && (amd64 || arm64))

package client

import "net"

// kernelArrivals returns c: receive timestamps are read only on Linux (amd64, arm64).
func kernelArrivals(c net.Conn) net.Conn { return c }

// KernelArrivalsSupported reports whether this platform stamps events with kernel receive
// times.
const KernelArrivalsSupported = false
