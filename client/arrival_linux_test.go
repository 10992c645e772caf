//go:build linux && (amd64 || arm64)

package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// rxPair is a loopback TCP connection: the server's end and the client's end as the
// transport's dialler makes it.
func rxPair(t testing.TB, kernel bool) (srv net.Conn, cli net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dial := (&net.Dialer{}).DialContext
	if kernel {
		dial = withKernelClocks(dial, Clocks{Arrivals: true})
	}
	acc := make(chan net.Conn, 1)
	go func() { c, _ := ln.Accept(); acc <- c }()
	cli, err = dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv = <-acc
	t.Cleanup(func() { srv.Close(); cli.Close() })
	if kernel {
		primeArrivals(t, srv, cli)
	}
	return srv, cli
}

// primeArrivals waits until the kernel timestamps what cli receives. Linux turns receive
// timestamps on for the whole system from deferred work when the first socket asks, so the
// first segments after that can arrive without one (a read then reports 0 and the event is
// stamped when read).
func primeArrivals(t testing.TB, srv, cli net.Conn) {
	t.Helper()
	a := ArrivalsOf(cli)
	b := make([]byte, 1)
	for range 500 {
		if _, err := srv.Write(b); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(cli, b); err != nil {
			t.Fatal(err)
		}
		if a.LastArrival() > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the kernel gave no receive time for 500 reads")
}

// A read reports when its bytes arrived, not when it ran; EOF and deadlines behave as on
// any net.Conn.
func TestRxConnReports(t *testing.T) {
	srv, cli := rxPair(t, true)
	a := ArrivalsOf(cli)
	if a == nil {
		t.Fatal("the dialled connection reports no kernel receive times")
	}
	sent := time.Now()
	if _, err := srv.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the bytes wait in the socket
	buf := make([]byte, 64)
	n, err := cli.Read(buf)
	read := time.Now()
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	got := time.Unix(0, a.LastArrival())
	if got.Before(sent.Add(-time.Second)) || got.After(read) || read.Sub(got) < 50*time.Millisecond {
		t.Errorf("receive time %v: want between the write (%v) and well before the read (%v)", got, sent, read)
	}

	// a deadline is a timeout, as net/http expects
	_ = cli.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err = cli.Read(buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline: %v, want a timeout", err)
	}
	_ = cli.SetReadDeadline(time.Time{})

	// the peer's close is a clean EOF, with no receive time
	srv.Close()
	if n, err := cli.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("read after the peer closed: %d, %v; want 0, EOF", n, err)
	}
	if a.LastArrival() != 0 {
		t.Errorf("EOF kept receive time %d", a.LastArrival())
	}
	cli.Close()
	if _, err := cli.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read after our close: %v, want net.ErrClosed", err)
	}
}

// Every byte arrives in order through recvmsg, and a read allocates nothing.
func TestRxConnCopiesAndDoesNotAllocate(t *testing.T) {
	srv, cli := rxPair(t, true)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB, several reads
	go func() { _, _ = srv.Write(want); srv.Close() }()
	got, err := io.ReadAll(cli)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (%v), want the %d written", len(got), err, len(want))
	}

	srv2, cli2 := rxPair(t, true)
	buf := make([]byte, 16)
	msg := []byte("0123456789abcdef")
	allocs := testing.AllocsPerRun(200, func() {
		_, _ = srv2.Write(msg)
		if _, err := io.ReadFull(cli2, buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per write and read, want 0", allocs)
	}
}

// BenchmarkConnRead is the cost of reading one small stream event off a loopback socket,
// with a plain read and with recvmsg and its receive time; compare the two side by side:
//
//	go test -run '^$' -bench ConnRead -count 5 ./client
func BenchmarkConnRead(b *testing.B) {
	for _, kernel := range []bool{false, true} {
		name := "read"
		if kernel {
			name = "kernel"
		}
		b.Run(name, func(b *testing.B) {
			srv, cli := rxPair(b, kernel)
			msg := bytes.Repeat([]byte("x"), 200) // one SSE event with usage
			buf := make([]byte, 16<<10)
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := srv.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(cli, buf[:len(msg)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
