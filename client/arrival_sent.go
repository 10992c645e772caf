package client

import (
	"crypto/tls"
	"net"
)

// Kernel send times.
//
// A request's `sent` is when its last byte left for the server. Stamped in user space (the
// httptrace WroteRequest hook), it is late by however long the writing goroutine waited for
// a core after its write returned: when a thousand goroutines write at once that is
// milliseconds, and it comes off every TTFT. On Linux servebench therefore asks the kernel
// for the transmit time of each write (SO_TIMESTAMPING, software transmit timestamps read
// from the socket's error queue) and stamps `sent` with the one of the write that ended the
// request. The kernel numbers its reports by byte (SOF_TIMESTAMPING_OPT_ID): the report for a
// write is keyed by the offset of its last byte, which the connection counts as it writes.
// The time is CLOCK_REALTIME, converted to the run's monotonic clock as receive times are.
//
// Only HTTP/1 connections report send times: over HTTP/2 the writes of several streams
// interleave in one buffer, and the write that ends a request is not the latest one when
// its WroteRequest hook runs.

// Sends reports when the kernel transmitted the bytes written to a connection.
//
// net/http runs the WroteRequest hook when the request is in its write buffer, before the
// flush that writes its end to the socket; so a request's end is the first write that ends
// after the hook's LastWrite, and SentAfter is asked once that write can have happened (when
// the answer arrives).
type Sends interface {
	// LastWrite marks the end of the latest write to the connection (a byte count).
	LastWrite() uint32
	// SentAfter is the kernel's transmit time (Unix ns) of the last byte of the first write
	// that ended after mark, or of the write that ended at mark when none has since; 0 when
	// the kernel has not reported it (not yet, or not at all: the connection stopped asking,
	// or the write is too far back).
	SentAfter(mark uint32) int64
}

// SendObserver is an Observer that also wants the Sends of the connection a request is sent
// on (nil when it has none). Serial passes them on at GotConn, with the Arrivals.
type SendObserver interface {
	Observer
	Sends(s Sends)
}

// SendsOf returns the Sends of a connection a request got (httptrace GotConn), or nil when
// the connection gives no kernel send times (not Linux, not TCP, turned off, refused by the
// kernel, or HTTP/2).
func SendsOf(c net.Conn) Sends {
	if t, ok := c.(*tls.Conn); ok {
		if t.ConnectionState().NegotiatedProtocol == "h2" {
			return nil
		}
		c = t.NetConn()
	}
	if s, ok := c.(interface{ sendsOn() bool }); !ok || !s.sendsOn() {
		return nil
	}
	return c.(Sends)
}

// Clocks says which kernel clocks a Transport's connections ask for.
type Clocks struct {
	Arrivals bool // receive times of the bytes read (SO_TIMESTAMPNS)
	Sends    bool // transmit times of the bytes written (SO_TIMESTAMPING)
}
