package client

import (
	"context"
	"net"
	"net/http/httptrace"
	"sync"
)

// Serial wraps a request's Observer for a backend. It exists because net/http calls its
// httptrace hooks from its own goroutines: dial hooks run in the dialling goroutine, and
// WroteRequest runs in the connection's write loop and may fire after Do has returned (a
// server can answer before it has read the whole body). Serial makes every call to the
// wrapped Observer mutually exclusive, so an Observer never sees concurrent calls, and drops
// calls after Close, so a late hook cannot touch a record that the caller has moved on from.
// An uncontended lock costs tens of nanoseconds, far below the cost of decoding one event.
//
// It also pairs connection hooks: ConnectStart is passed on at most once per request and
// ConnectDone only after it. When net/http hands a request a connection that another
// request's dial produced (or an idle one while its own dial is still running), the observer
// sees ConnectStart without ConnectDone, or neither; it must treat an unpaired ConnectStart
// as "no connect time".
type Serial struct {
	mu         sync.Mutex
	obs        Observer
	closed     bool
	connecting bool // ConnectStart was passed on
	connected  bool // ConnectDone was passed on
}

// NewSerial wraps obs.
func NewSerial(obs Observer) *Serial { return &Serial{obs: obs} }

// Close drops every later call. Backends call it before Do returns.
func (s *Serial) Close() { s.mu.Lock(); s.closed = true; s.mu.Unlock() }

// WithClientTrace returns ctx with httptrace hooks that report connection set-up and the
// end of the request write to the Observer:
//   - connect starts at DNSStart, or at ConnectStart when there is no lookup, so the record's
//     "DNS + dial + TLS" duration includes the lookup;
//   - connect is done at GotConn for a new connection: after TLS (and the HTTP/2 preface),
//     the moment the connection can carry the request (TLSHandshakeDone would be earlier
//     and is absent without TLS, so it is not used);
//   - WroteRequest is reported only when the write succeeded.
func (s *Serial) WithClientTrace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		DNSStart:     func(httptrace.DNSStartInfo) { s.ConnectStart() },
		ConnectStart: func(string, string) { s.ConnectStart() },
		GotConn: func(info httptrace.GotConnInfo) {
			s.gotConn(info.Conn)
			if !info.Reused {
				s.ConnectDone()
			}
		},
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				s.WroteRequest()
			}
		},
	})
}

// gotConn passes the connection's kernel receive times to an ArrivalObserver and its kernel
// send times to a SendObserver.
func (s *Serial) gotConn(c net.Conn) {
	a, arrivals := s.obs.(ArrivalObserver)
	t, sends := s.obs.(SendObserver)
	if !arrivals && !sends {
		return
	}
	if s.lock() {
		if arrivals {
			a.Arrivals(ArrivalsOf(c))
		}
		if sends {
			t.Sends(SendsOf(c))
		}
	}
	s.mu.Unlock()
}

// lock takes the mutex and reports whether calls are still passed on. The caller unlocks.
func (s *Serial) lock() bool { s.mu.Lock(); return !s.closed }

// Dispatched implements Observer.
func (s *Serial) Dispatched() {
	if s.lock() {
		s.obs.Dispatched()
	}
	s.mu.Unlock()
}

// ConnectStart implements Observer; only the first call of a request is passed on.
func (s *Serial) ConnectStart() {
	if s.lock() && !s.connecting {
		s.connecting = true
		s.obs.ConnectStart()
	}
	s.mu.Unlock()
}

// ConnectDone implements Observer; passed on once, and only after ConnectStart.
func (s *Serial) ConnectDone() {
	if s.lock() && s.connecting && !s.connected {
		s.connected = true
		s.obs.ConnectDone()
	}
	s.mu.Unlock()
}

// WroteRequest implements Observer.
func (s *Serial) WroteRequest() {
	if s.lock() {
		s.obs.WroteRequest()
	}
	s.mu.Unlock()
}

// Headers implements Observer.
func (s *Serial) Headers(status int) {
	if s.lock() {
		s.obs.Headers(status)
	}
	s.mu.Unlock()
}

// EventRead implements Observer.
func (s *Serial) EventRead() {
	if s.lock() {
		s.obs.EventRead()
	}
	s.mu.Unlock()
}

// Choice implements Observer.
func (s *Serial) Choice() {
	if s.lock() {
		s.obs.Choice()
	}
	s.mu.Unlock()
}

// Content implements Observer.
func (s *Serial) Content(tokens int) {
	if s.lock() {
		s.obs.Content(tokens)
	}
	s.mu.Unlock()
}

// Usage implements Observer.
func (s *Serial) Usage(prompt, completion int) {
	if s.lock() {
		s.obs.Usage(prompt, completion)
	}
	s.mu.Unlock()
}

// Server implements Observer.
func (s *Serial) Server(name string, v float64) {
	if s.lock() {
		s.obs.Server(name, v)
	}
	s.mu.Unlock()
}

// Done implements Observer.
func (s *Serial) Done() {
	if s.lock() {
		s.obs.Done()
	}
	s.mu.Unlock()
}

var _ Observer = (*Serial)(nil)
