//go:build linux && (amd64 || arm64)

package client

import (
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// SO_TIMESTAMPING flags (linux/net_tstamp.h) and error-queue constants (linux/errqueue.h).
const (
	tsTxSoftware = 1 << 1  // SOF_TIMESTAMPING_TX_SOFTWARE: stamp when the segment leaves for the device
	tsSoftware   = 1 << 4  // SOF_TIMESTAMPING_SOFTWARE: report software stamps
	tsOptID      = 1 << 7  // SOF_TIMESTAMPING_OPT_ID: key each report by byte offset
	tsOptTSOnly  = 1 << 11 // SOF_TIMESTAMPING_OPT_TSONLY: no copy of the packet with the report
	tsOptIDTCP   = 1 << 16 // SOF_TIMESTAMPING_OPT_ID_TCP: offsets from the write sequence (Linux 6.2)
	tsOptRxFilt  = 1 << 17 // SOF_TIMESTAMPING_OPT_RX_FILTER: no SCM_TIMESTAMPING on reads (Linux 6.12)

	eeOriginTimestamping = 4 // SO_EE_ORIGIN_TIMESTAMPING
	tstampSnd            = 0 // SCM_TSTAMP_SND: the report of a transmit
	msgErrQueue          = 0x2000
	ipRecvErr            = 11 // IP_RECVERR
	ipv6RecvErr          = 25 // IPV6_RECVERR
)

// txStamps reads a connection's software transmit timestamps. The kernel stamps the segment
// that carries the last byte of each write (sendmsg) as it leaves for the device, and queues
// the report on the socket's error queue keyed by that byte's offset since the option was set
// (OPT_ID; connected and nothing in flight, so offset 0 is the first byte we write). Writes
// count their bytes, so the report of a write is the one keyed by its end − 1. The last few
// writes are kept with their reports: a request's is asked for after its answer arrived.
//
// The error queue is read with recvmsg(MSG_ERRQUEUE|MSG_DONTWAIT) inside RawConn.Control,
// never RawConn.Read: it must neither block nor take the poller's read wait, which belongs to
// the connection's reader.
type txStamps struct {
	rc  syscall.RawConn
	off atomic.Bool // stopped asking (see rxConn.readErrQueueStall)

	mu      sync.Mutex
	written uint32       // bytes written, modulo 2³²
	writes  [8]sentWrite // the latest writes, a ring
	next    int          // where the next write goes in writes
	msg     syscall.Msghdr
	oob     [256]byte // SCM_TIMESTAMPING (64 bytes), SCM_TIMESTAMPNS (32) and IP(V6)_RECVERR (64)
	drainFn func(fd uintptr)
	// afterWrite, when set (tests only), runs between a write and the reading of its report:
	// a writer descheduled there must still get the kernel's time.
	afterWrite func()
}

// sentWrite is a write: where it ended (written after it) and its report (Unix ns, 0: none).
type sentWrite struct {
	end uint32
	ts  int64
}

// newTxStamps turns transmit timestamps on for the socket, or returns nil when the kernel
// refuses them. Newer flags are tried first and dropped one by one for older kernels.
func newTxStamps(rc syscall.RawConn) *txStamps {
	base := tsTxSoftware | tsSoftware | tsOptID | tsOptTSOnly
	for _, flags := range []int{base | tsOptIDTCP | tsOptRxFilt, base | tsOptIDTCP, base} {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPING, flags)
		}); err != nil {
			return nil
		}
		if serr == nil {
			t := &txStamps{rc: rc}
			t.drainFn = t.drain
			return t
		}
	}
	return nil
}

// wrote counts n bytes just written and takes the kernel's reports off the error queue.
func (t *txStamps) wrote(n int) {
	if n <= 0 {
		return
	}
	if t.afterWrite != nil {
		t.afterWrite()
	}
	t.mu.Lock()
	t.written += uint32(n)
	t.writes[t.next] = sentWrite{end: t.written}
	t.next = (t.next + 1) % len(t.writes)
	if !t.off.Load() {
		_ = t.rc.Control(t.drainFn)
	}
	t.mu.Unlock()
}

func (t *txStamps) lastWrite() uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.written
}

// sentAfter is the report of the request's end (see Sends.SentAfter), reading the error queue
// again when it is not there yet (a report can come after the write returned: a NIC's queue,
// TCP's small-queue or congestion window deferring the segment).
func (t *txStamps) sentAfter(mark uint32) int64 {
	if t.off.Load() {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.endAfter(mark)
	if w == nil {
		return 0
	}
	if w.ts == 0 {
		_ = t.rc.Control(t.drainFn)
	}
	return w.ts
}

// endAfter is the first kept write that ended after mark, else the one that ended at mark;
// nil when neither is kept. Offsets are compared modulo 2³² (a write is far less than 2 GiB).
func (t *txStamps) endAfter(mark uint32) *sentWrite {
	var at *sentWrite
	for i := range t.writes {
		w := &t.writes[(t.next+i)%len(t.writes)] // oldest first
		switch d := int32(w.end - mark); {
		case w.end == 0 && w.ts == 0: // never used
		case d > 0:
			return w
		case d == 0:
			at = w
		}
	}
	return at
}

// stop turns transmit timestamps off and empties the error queue.
func (t *txStamps) stop() {
	if t.off.Swap(true) {
		return
	}
	_ = t.rc.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPING, 0)
	})
	t.mu.Lock()
	_ = t.rc.Control(t.drainFn)
	t.mu.Unlock()
}

// drain reads every report on the error queue, keeping the latest. Called with mu held.
func (t *txStamps) drain(fd uintptr) {
	for {
		t.msg.Iov, t.msg.Iovlen = nil, 0 // OPT_TSONLY: nothing but the control data
		t.msg.Control = &t.oob[0]
		t.msg.SetControllen(len(t.oob))
		_, _, e := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&t.msg)), msgErrQueue|syscall.MSG_DONTWAIT)
		switch e {
		case syscall.EINTR:
			continue
		case 0:
			t.report()
			continue
		}
		return // EAGAIN: empty
	}
}

// report keeps the transmit report in the last error-queue message, if it is one: an
// SCM_TIMESTAMPING whose first timespec is the software stamp, and an IP(V6)_RECVERR whose
// sock_extended_err says which byte (ee_data) and what kind (ee_info).
func (t *txStamps) report() {
	var ts int64
	var key uint32
	ok := false
	eachCmsg(t.oob[:min(int(t.msg.Controllen), len(t.oob))], func(h *syscall.Cmsghdr, data []byte) {
		switch {
		case h.Level == syscall.SOL_SOCKET && h.Type == syscall.SO_TIMESTAMPING && len(data) >= 3*int(unsafe.Sizeof(syscall.Timespec{})):
			ts = (*syscall.Timespec)(unsafe.Pointer(&data[0])).Nano()
		case (h.Level == syscall.SOL_IP && h.Type == ipRecvErr) || (h.Level == syscall.SOL_IPV6 && h.Type == ipv6RecvErr):
			if len(data) < 16 {
				return
			}
			errno := *(*uint32)(unsafe.Pointer(&data[0]))
			info := *(*uint32)(unsafe.Pointer(&data[8]))
			if data[4] == eeOriginTimestamping && errno == uint32(syscall.ENOMSG) && info == tstampSnd {
				key, ok = *(*uint32)(unsafe.Pointer(&data[12])), true
			}
		}
	})
	if !ok || ts <= 0 {
		return
	}
	for i := range t.writes {
		if w := &t.writes[i]; w.end-1 == key {
			w.ts = ts
			return
		}
	}
}
