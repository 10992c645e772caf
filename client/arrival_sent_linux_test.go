//go:build linux && (amd64 || arm64)

package client

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// txPair is a loopback TCP connection whose client end reports kernel send times (and
// receive times), as the transport's dialler makes it; it skips where the kernel refuses.
func txPair(t testing.TB) (srv net.Conn, cli net.Conn, s Sends) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() { c, _ := ln.Accept(); acc <- c }()
	cli, err = withKernelClocks((&net.Dialer{}).DialContext, Clocks{Arrivals: true, Sends: true})(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv = <-acc
	t.Cleanup(func() { srv.Close(); cli.Close() })
	if s = SendsOf(cli); s == nil {
		t.Skip("the kernel refused SO_TIMESTAMPING transmit timestamps")
	}
	return srv, cli, s
}

// sendStamp writes p and returns the kernel's send time of its last byte, with the wall
// clock just before and just after the write.
func sendStamp(t *testing.T, cli net.Conn, s Sends, p []byte) (sent, before, after time.Time) {
	t.Helper()
	mark := s.LastWrite() // as the WroteRequest hook takes it: before the flush
	before = time.Now()
	if _, err := cli.Write(p); err != nil {
		t.Fatal(err)
	}
	after = time.Now()
	k := s.SentAfter(mark)
	if k == 0 {
		t.Skip("the kernel gave this loopback write no transmit timestamp")
	}
	return time.Unix(0, k), before, after
}

// The transmit time of a loopback write is read back and lies between the moments before
// and after the write, for every write of a connection (the byte counter keeps up).
func TestSentAfterLiesWithinTheWrite(t *testing.T) {
	srv, cli, s := txPair(t)
	go func() { _, _ = io.Copy(io.Discard, srv) }()
	for i, n := range []int{1, 100, 5000, 60 << 10} {
		sent, before, after := sendStamp(t, cli, s, make([]byte, n))
		if sent.Before(before) || sent.After(after) {
			t.Errorf("write %d (%d bytes): sent %v, want within [%v, %v]", i, n, sent, before, after)
		}
	}
	// a write larger than the send buffer ends with a segment sent after the write returned,
	// when the peer's acknowledgements let it go: its report comes later and is read then
	mark, before := s.LastWrite(), time.Now()
	if _, err := cli.Write(make([]byte, 4<<20)); err != nil {
		t.Fatal(err)
	}
	var k int64
	for range 100 {
		if k = s.SentAfter(mark); k != 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if asked := time.Now(); k == 0 || time.Unix(0, k).Before(before) || time.Unix(0, k).After(asked) {
		t.Errorf("4 MiB write: sent %v, want within [%v, %v]", time.Unix(0, k), before, asked)
	}
	// reads still report receive times and nothing else breaks
	if _, err := srv.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := cli.Read(buf); err != nil || string(buf[:n]) != "hi" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
}

// A writer descheduled between its write and reading the report (a busy load generator)
// still gets the time the kernel sent the bytes, not the time it got round to asking.
func TestSentAfterSurvivesAStalledWriter(t *testing.T) {
	srv, cli, s := txPair(t)
	go func() { _, _ = io.Copy(io.Discard, srv) }()
	const stall = 100 * time.Millisecond
	cli.(*rxConn).tx.afterWrite = func() { time.Sleep(stall) }
	mark := s.LastWrite()
	before := time.Now()
	if _, err := cli.Write([]byte("POST / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(stall) // and the hook that asks for it runs later still
	k := s.SentAfter(mark)
	if k == 0 {
		t.Skip("the kernel gave this loopback write no transmit timestamp")
	}
	if sent := time.Unix(0, k); sent.Before(before) || sent.Sub(before) > stall/2 {
		t.Errorf("sent %v after the write began; the writer stalled %v after it", sent.Sub(before), stall)
	}
}

// A mark finds the first write after it, also once later writes were reported, and the
// write that ended at it when none came since (the hook ran after the last flush).
func TestSentAfterFindsTheWrite(t *testing.T) {
	srv, cli, s := txPair(t)
	go func() { _, _ = io.Copy(io.Discard, srv) }()
	m0 := s.LastWrite()
	first, _, _ := sendStamp(t, cli, s, []byte("a"))
	m1 := s.LastWrite()
	time.Sleep(time.Millisecond)
	second, _, _ := sendStamp(t, cli, s, []byte("bc"))
	if !second.After(first) {
		t.Fatalf("second write sent %v, not after the first %v", second, first)
	}
	if k := s.SentAfter(m0); k != first.UnixNano() {
		t.Errorf("the first write's mark got %v, want %v", time.Unix(0, k), first)
	}
	if k := s.SentAfter(m1); k != second.UnixNano() {
		t.Errorf("the second write's mark got %v, want %v", time.Unix(0, k), second)
	}
	if k := s.SentAfter(s.LastWrite()); k != second.UnixNano() {
		t.Errorf("a mark at the last write's end got %v, want that write's %v", time.Unix(0, k), second)
	}
	if k := s.SentAfter(s.LastWrite() + 100); k != 0 {
		t.Errorf("a mark no write reached got %v", time.Unix(0, k))
	}
}

// A transmit report queued while the socket is neither readable nor writable (a large write
// still in a full send buffer, a reader waiting for the answer) makes Go's poller fail the
// reader's wait with "not pollable". The read must survive it and return the answer; the
// connection then stops asking for send times.
func TestReadSurvivesErrQueueOnlyEvent(t *testing.T) {
	srv, cli, _ := txPair(t)
	got := make(chan error, 1)
	go func() {
		buf := make([]byte, 2)
		_, err := io.ReadFull(cli, buf)
		if err == nil && string(buf) != "ok" {
			err = io.ErrUnexpectedEOF
		}
		got <- err
	}()
	go func() { _, _ = cli.Write(make([]byte, 64<<20)) }() // far more than the buffers hold
	time.Sleep(50 * time.Millisecond)
	// the server drains slowly: each read opens the window, a segment goes, a report is queued
	buf := make([]byte, 64<<10)
	for range 200 {
		if _, err := srv.Read(buf); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Microsecond)
	}
	if _, err := srv.Write([]byte("ok")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("read during transmit reports: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read never returned the answer")
	}
	t.Logf("send times still on after the stall: %v", SendsOf(cli) != nil)
}
