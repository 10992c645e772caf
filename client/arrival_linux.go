//go:build linux && (amd64 || arm64)

package client

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// KernelArrivalsSupported reports whether this platform stamps events with kernel receive
// times.
const KernelArrivalsSupported = true

// kernelArrivals turns on SO_TIMESTAMPNS for a TCP connection and returns it wrapped in an
// rxConn; any other connection, or one whose socket refuses the option, is returned as is.
func kernelArrivals(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	x := &rxConn{Conn: tc, rc: rc}
	x.recv = x.recvmsg
	return x
}

// rxConn is a TCP connection whose reads are recvmsg calls that also return the kernel's
// receive time of the data. Reads of one connection never overlap (net/http reads a
// connection from one goroutine at a time), so the message header is reused; LastArrival
// may be called from any goroutine.
type rxConn struct {
	net.Conn // the *net.TCPConn: writes, close, addresses and deadlines pass through
	rc       syscall.RawConn
	last     atomic.Int64

	msg   syscall.Msghdr
	iov   syscall.Iovec
	oob   [64]byte // one SCM_TIMESTAMPNS: a 16-byte header and a 16-byte timespec
	n     int
	errno syscall.Errno
	recv  func(fd uintptr) bool // x.recvmsg, bound once so a read allocates nothing
}

// LastArrival implements Arrivals.
func (x *rxConn) LastArrival() int64 { return x.last.Load() }

// Read implements net.Conn with recvmsg; the poller waits for data as for any read, and
// deadlines apply.
func (x *rxConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	x.iov.Base = &p[0]
	x.iov.SetLen(len(p))
	x.msg.Iov, x.msg.Iovlen = &x.iov, 1
	x.msg.Control = &x.oob[0]
	x.msg.SetControllen(len(x.oob))
	err := x.rc.Read(x.recv)
	x.iov.Base, x.msg.Iov = nil, nil // do not keep the caller's buffer alive
	switch {
	case err != nil: // closed, or a deadline passed
		return 0, x.opError(err)
	case x.errno != 0:
		return 0, x.opError(os.NewSyscallError("recvmsg", x.errno))
	case x.n == 0: // the peer's FIN carries no receive time: an end of stream is stamped when read
		x.last.Store(0)
		return 0, io.EOF
	}
	x.last.Store(x.stamp())
	return x.n, nil
}

// recvmsg is the raw read, run by the poller until it does not return EAGAIN.
func (x *rxConn) recvmsg(fd uintptr) bool {
	for {
		r, _, e := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&x.msg)), 0)
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			x.n, x.errno = int(r), 0
			if raceBuild {
				// syscall.Read tells the race detector that a read sees what the peer
				// wrote before it (a socket synchronises like a channel); a raw recvmsg
				// does not, so an empty read says it
				_, _ = syscall.Read(int(fd), nil)
			}
		default:
			x.n, x.errno = 0, e
		}
		return true
	}
}

// stamp returns the receive time the last recvmsg's control data carried (Unix ns), or 0.
func (x *rxConn) stamp() int64 {
	hdr := syscall.CmsgLen(0) // the aligned size of a cmsghdr
	if int(x.msg.Controllen) < hdr+int(unsafe.Sizeof(syscall.Timespec{})) {
		return 0
	}
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&x.oob[0]))
	if h.Level != syscall.SOL_SOCKET || h.Type != syscall.SCM_TIMESTAMPNS {
		return 0
	}
	ts := (*syscall.Timespec)(unsafe.Pointer(&x.oob[hdr]))
	return ts.Nano()
}

func (x *rxConn) opError(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) { // RawConn's own "raw-read" error: keep its cause only
		err = oe.Err
	}
	return &net.OpError{Op: "read", Net: "tcp", Source: x.LocalAddr(), Addr: x.RemoteAddr(), Err: err}
}
