//go:build linux

package sim

import (
	"net"
	"syscall"
	"unsafe"
)

// arrivalClock turns on kernel receive timestamps for c and returns a function that waits
// for its next bytes and returns their receive time (Unix ns; 0 when the kernel gave none),
// leaving them in the socket (MSG_PEEK); nil when the socket refuses. The simulator's own
// read of a request can be late by its scheduling delay; the kernel's receive time is when
// the request reached the server, which is where a client's TTFT starts on the wire.
func arrivalClock(c net.Conn) func() int64 {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	return func() int64 {
		var b [1]byte
		var oob [64]byte
		var at int64
		_ = rc.Read(func(fd uintptr) bool {
			_, oobn, _, _, err := syscall.Recvmsg(int(fd), b[:], oob[:], syscall.MSG_PEEK)
			if err == syscall.EAGAIN {
				return false
			}
			hdr := syscall.CmsgLen(0)
			if err == nil && oobn >= hdr+int(unsafe.Sizeof(syscall.Timespec{})) {
				if h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0])); h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS {
					at = (*syscall.Timespec)(unsafe.Pointer(&oob[hdr])).Nano()
				}
			}
			return true // data, EOF or an error: the read that follows reports it
		})
		return at
	}
}
