package client

import (
	"context"
	"crypto/tls"
	"net"
)

// Kernel receive times.
//
// A client that is busy, or waiting for a core that the server (or anything else) holds,
// reads a stream event later than it arrived, and a timestamp taken at the read carries that
// delay into TTFT and ITL. On Linux servebench therefore asks the kernel for the receive time
// of the bytes each read returns (SO_TIMESTAMPNS, one recvmsg per read instead of a read)
// and stamps an event with it: the client's own scheduling delay is left out, whatever the
// load. The kernel's time is CLOCK_REALTIME; the Observer converts it to the monotonic run
// clock by subtracting its age (wall now − receive time) from the monotonic now, so a wall
// clock that moves during a run does not move the stamps (see load's stamp).
//
// The time a read reports is that of the newest segment it returned, so an event is stamped
// no earlier than its bytes arrived and no later than it was read: when one read brings
// several events (the client was behind), they share the time of the last. Over TLS the
// TLS layer may read ahead, and over HTTP/2 several streams share a connection; either can
// only move a stamp towards the read time, never before the true arrival.

// Arrivals reports when the latest bytes read from a connection arrived.
type Arrivals interface {
	// LastArrival is the kernel's receive time (Unix ns) of the newest bytes the latest
	// read returned, or 0 when that read carried none (no data, or no timestamp).
	LastArrival() int64
}

// ArrivalsOf returns the Arrivals of a connection a request got (httptrace GotConn), or nil
// when the connection has no kernel receive times (not Linux, not TCP, turned off, or the
// kernel refused the socket option).
func ArrivalsOf(c net.Conn) Arrivals {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	if a, ok := c.(interface{ arrivalsOn() bool }); !ok || !a.arrivalsOn() {
		return nil
	}
	return c.(Arrivals)
}

// ArrivalObserver is an Observer that also wants the Arrivals of the connection a request
// is sent on (nil when it has none). Serial passes them on at GotConn, again if net/http
// retries the request on another connection.
type ArrivalObserver interface {
	Observer
	Arrivals(a Arrivals)
}

// dialFunc is a Transport's DialContext.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// withKernelClocks wraps dial so that every TCP connection it makes reports the kernel
// clocks k asks for where the platform allows (see arrival_linux.go); elsewhere it is dial.
func withKernelClocks(dial dialFunc, k Clocks) dialFunc {
	if !k.Arrivals && !k.Sends {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return kernelClocks(c, k), nil
	}
}
