package sim

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// writeRequest appends the line of a request's arrival:
//
//	{"request_id":"cmpl-1","kind":"request","read_ns":1712345678901234567,"arrived_ns":1712345678901000000}
//
// read_ns is Unix nanoseconds of the wall clock when a read first returned bytes of the
// request: with the first content event's written_ns, the server's own TTFT. arrived_ns
// (Linux; absent elsewhere) is the kernel's receive time of those bytes: read_ns less the
// simulator's own delay in getting to them.
func (t *truthLog) writeRequest(id string, read, arrived int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.err != nil {
		return
	}
	b := append(t.line[:0], `{"request_id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"kind":"request","read_ns":`...)
	b = strconv.AppendInt(b, read, 10)
	if arrived != 0 {
		b = append(b, `,"arrived_ns":`...)
		b = strconv.AppendInt(b, arrived, 10)
	}
	b = append(b, "}\n"...)
	t.line = b
	if _, err := t.w.Write(b); err != nil {
		t.err = err
	}
}

// readListener wraps the connections it accepts in readConns (only with a truth log).
type readListener struct{ net.Listener }

func (l readListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	rc := &readConn{Conn: c, peek: arrivalClock(c)}
	rc.idle.Store(true)
	return rc, nil
}

// readConn notes when a read first returned bytes of each request: the reference point of
// the server's own TTFT. The handler cannot take it: net/http calls it after the headers are
// parsed, and a busy server gets there late. A connection carries one request at a time
// (HTTP/1.1; the client sends the next only after the last response ended), so the first
// bytes read after a request's handler returned start the next request.
type readConn struct {
	net.Conn
	idle    atomic.Bool  // the next bytes read start a request
	at      atomic.Int64 // Unix ns of the read that returned the current request's first bytes
	arrived atomic.Int64 // the kernel's receive time of those bytes (Unix ns; 0: unknown)
	peek    func() int64 // arrivalClock; nil: no kernel receive times
}

func (c *readConn) Read(p []byte) (int, error) {
	idle := c.idle.Load()
	var arrived int64
	if idle && c.peek != nil {
		arrived = c.peek()
	}
	n, err := c.Conn.Read(p)
	if n > 0 && idle {
		c.at.Store(time.Now().UnixNano())
		c.arrived.Store(arrived)
		c.idle.Store(false)
	}
	return n, err
}

// CloseWrite lets net/http half-close the connection as it would a *net.TCPConn.
func (c *readConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

type readConnKey struct{}

// withReadConn is http.Server.ConnContext: the request's handler finds its connection.
func withReadConn(ctx context.Context, c net.Conn) context.Context {
	if rc, ok := c.(*readConn); ok {
		return context.WithValue(ctx, readConnKey{}, rc)
	}
	return ctx
}

// requestRead is when the first bytes of r were read and when the kernel received them
// (Unix ns), 0 when unknown.
func requestRead(r *http.Request) (read, arrived int64) {
	if rc, ok := r.Context().Value(readConnKey{}).(*readConn); ok {
		return rc.at.Load(), rc.arrived.Load()
	}
	return 0, 0
}

// nextRequest wraps a handler so that, when it returns, its connection's next bytes start a
// new request.
func nextRequest(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if rc, ok := r.Context().Value(readConnKey{}).(*readConn); ok {
				rc.idle.Store(true)
			}
		}()
		h.ServeHTTP(w, r)
	})
}
