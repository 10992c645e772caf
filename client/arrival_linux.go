//go:build linux && (amd64 || arm64)

package client

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// KernelArrivalsSupported reports whether this platform stamps events with kernel receive
// times (and requests with kernel send times).
const KernelArrivalsSupported = true

// kernelClocks turns on the socket options k asks for on a TCP connection (SO_TIMESTAMPNS
// for receive times, SO_TIMESTAMPING for send times) and returns it wrapped in an rxConn;
// any other connection, or one whose socket refuses both, is returned as is.
func kernelClocks(c net.Conn, k Clocks) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	x := &rxConn{Conn: tc, rc: rc}
	x.recv = x.recvmsg
	if k.Arrivals {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
		}); err == nil && serr == nil {
			x.rx = true
		}
	}
	if k.Sends {
		x.tx = newTxStamps(rc)
	}
	if !x.rx && x.tx == nil {
		return c
	}
	return x
}

// rxConn is a TCP connection whose reads are recvmsg calls that also return the kernel's
// receive time of the data, and whose writes are followed by reading the kernel's transmit
// times of earlier writes from the socket's error queue (see txStamps). Reads of one
// connection never overlap (net/http reads a connection from one goroutine at a time), so
// the message header is reused; LastArrival may be called from any goroutine.
type rxConn struct {
	net.Conn // the *net.TCPConn: close, addresses and deadlines pass through
	rc       syscall.RawConn
	rx       bool      // SO_TIMESTAMPNS is on: reads report receive times
	tx       *txStamps // nil: no send times
	last     atomic.Int64

	msg   syscall.Msghdr
	iov   syscall.Iovec
	oob   [128]byte // SCM_TIMESTAMPNS (32 bytes), and SCM_TIMESTAMPING (64) where the kernel adds it
	n     int
	errno syscall.Errno
	recv  func(fd uintptr) bool // x.recvmsg, bound once so a read allocates nothing
}

func (x *rxConn) arrivalsOn() bool { return x.rx }
func (x *rxConn) sendsOn() bool    { return x.tx != nil && !x.tx.off.Load() }

// LastArrival implements Arrivals.
func (x *rxConn) LastArrival() int64 { return x.last.Load() }

// LastWrite implements Sends.
func (x *rxConn) LastWrite() uint32 { return x.tx.lastWrite() }

// SentAfter implements Sends.
func (x *rxConn) SentAfter(mark uint32) int64 { return x.tx.sentAfter(mark) }

// Write implements net.Conn; with send times on, it then takes the kernel's reports off the
// error queue (on loopback and most NICs the report of a write is queued before the write
// returns), so they never pile up there (see readErrQueueStall).
func (x *rxConn) Write(p []byte) (int, error) {
	n, err := x.Conn.Write(p)
	if x.tx != nil {
		x.tx.wrote(n)
	}
	return n, err
}

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
	if err != nil && x.tx != nil && notPollable(err) {
		err = x.readErrQueueStall()
	}
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

// notPollable reports whether err is the poller's "not pollable": Go's netpoller reports it to
// a reader when an epoll event carried EPOLLERR alone, which a queued transmit report does
// when the socket is neither readable nor writable (a large request still in the send
// buffer). internal/poll's error is not exported, so it is known by its text.
func notPollable(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "not pollable" {
			return true
		}
	}
	return false
}

// readErrQueueStall recovers a read from the poller's "not pollable": it empties the error
// queue and stops asking for send times on this connection (its requests fall back to the
// write stamp), then retries the read. The poller keeps failing reads until the next epoll
// event of the socket (the data it waits for), so until then the read is retried after
// short sleeps; a receive time is the kernel's, so the sleep does not move the stamp.
// Deadlines and Close still end it.
func (x *rxConn) readErrQueueStall() error {
	x.tx.stop()
	nap := 50 * time.Microsecond
	for {
		done := false
		if err := x.rc.Control(func(fd uintptr) { done = x.recv(fd) }); err != nil {
			return err
		}
		if done {
			return nil
		}
		err := x.rc.Read(x.recv)
		if err == nil || !notPollable(err) {
			return err
		}
		time.Sleep(nap)
		nap = min(2*nap, 5*time.Millisecond)
	}
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
// With send times on, a kernel that cannot filter them (before SOF_TIMESTAMPING_OPT_RX_FILTER)
// also adds an SCM_TIMESTAMPING of the same time; SCM_TIMESTAMPNS comes first.
func (x *rxConn) stamp() int64 {
	var t int64
	eachCmsg(x.oob[:min(int(x.msg.Controllen), len(x.oob))], func(h *syscall.Cmsghdr, data []byte) {
		if t == 0 && h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			t = (*syscall.Timespec)(unsafe.Pointer(&data[0])).Nano()
		}
	})
	return t
}

// eachCmsg calls f with every control message of oob.
func eachCmsg(oob []byte, f func(h *syscall.Cmsghdr, data []byte)) {
	hdr := syscall.CmsgLen(0) // the aligned size of a cmsghdr
	for len(oob) >= hdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return
		}
		f(h, oob[hdr:l])
		oob = oob[min(syscall.CmsgSpace(l-hdr), len(oob)):]
	}
}

func (x *rxConn) opError(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) { // RawConn's own "raw-read" error: keep its cause only
		err = oe.Err
	}
	return &net.OpError{Op: "read", Net: "tcp", Source: x.LocalAddr(), Addr: x.RemoteAddr(), Err: err}
}
