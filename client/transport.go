package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// NewHTTPClient returns an HTTP client whose one Transport is shared by every request of a
// run and sized to its concurrency maxConns (docs/design/ARCHITECTURE.md):
//   - MaxIdleConnsPerHost >= maxConns, so a closed loop of N users keeps N connections warm
//     instead of re-dialling (Go's default of 2 would put connection set-up into latencies);
//   - MaxConnsPerHost 0 (no cap): the load generator, not the transport, decides concurrency;
//   - no compression: gzip would buffer stream events and hide their arrival times;
//   - no overall Timeout: long streams are legal; callers use per-request contexts and the
//     backends' idle-stream timeout instead;
//   - large read and write buffers, 64 KiB per connection up to 1,024 connections: fewer
//     syscalls for large prompts and fast streams. Beyond that they shrink to keep the
//     buffers under 64 MiB per direction, never below 16 KiB (bufferSize): at 4,096 streams,
//     64 KiB each would be 512 MiB, and an event is a few hundred bytes;
//   - response headers bounded at 1 MiB (Go's default is 10 MiB): inference servers send a
//     few hundred bytes, and a server whose headers never end fails fast, as class connect;
//   - redirects never followed for benchmark requests, same host only for the rest (see
//     checkRedirect).
//
// TLS certificates are verified unless insecure is set. Proxies are taken from the
// environment as usual (Go never proxies loopback addresses).
func NewHTTPClient(maxConns int, insecure bool) *http.Client {
	return NewHTTPClientClock(maxConns, insecure, true)
}

// NewHTTPClientClock is NewHTTPClient with the kernel clocks on or off: with kernel set, its
// connections report kernel receive and send times where the platform allows (see Arrivals
// and Sends); without, events are stamped when they are read and requests when written.
func NewHTTPClientClock(maxConns int, insecure, kernel bool) *http.Client {
	return NewHTTPClientClocks(maxConns, insecure, Clocks{Arrivals: kernel, Sends: kernel})
}

// NewHTTPClientClocks is NewHTTPClient with each kernel clock chosen (run --arrival-clock,
// --send-clock).
func NewHTTPClientClocks(maxConns int, insecure bool, k Clocks) *http.Client {
	idle := max(maxConns, 2)
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	dial := withKernelClocks(dialer.DialContext, k)
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          0, // no global cap
		MaxIdleConnsPerHost:   idle,
		MaxConnsPerHost:       0,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		ReadBufferSize:        bufferSize(idle),
		WriteBufferSize:       bufferSize(idle),
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // user's explicit choice
	}
	tr.MaxResponseHeaderBytes = maxHeaderBytes
	return &http.Client{Transport: tr, CheckRedirect: checkRedirect}
}

// maxHeaderBytes bounds the response headers (see NewHTTPClient).
const maxHeaderBytes = 1 << 20

// bufferSize is the per-connection buffer for conns connections (see NewHTTPClient).
func bufferSize(conns int) int {
	const budget, most, least = 64 << 20, 64 << 10, 16 << 10
	return min(most, max(least, budget/max(conns, 1)))
}

// Prewarm opens n connections to t and leaves them idle in t's transport, so that the
// requests that follow find them ready and connection set-up (DNS, dial, TLS) stays out of
// their TTFT (run --prewarm-connections). It sends n concurrent GET /health requests, each of
// which waits in its GotConn hook, holding its connection before writing anything, until all
// n have one (or 10 s have passed): with no connection coming free meanwhile, every request
// needs one of its own. (Holding the response instead fails: a response without a body
// gives its connection back at once.) Any HTTP status will do. It returns how many new
// connections were made; the rest of the requests reused idle ones or failed.
func Prewarm(ctx context.Context, t Target, n int) int {
	var wg, arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var dialled atomic.Int64
	for range n {
		wg.Go(func() {
			once := sync.OnceFunc(arrived.Done)
			defer once() // a request that failed before GotConn must not hold up the rest
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
				if !info.Reused {
					dialled.Add(1)
				}
				once()
				select {
				case <-all:
				case <-ctx.Done():
				}
			}}
			req, err := t.NewRequest(httptrace.WithClientTrace(ctx, trace), http.MethodGet, "/health", nil)
			if err != nil {
				return
			}
			if resp, err := t.Client().Do(req); err == nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	return int(dialled.Load())
}

// defaultHTTP serves Targets that carry no client of their own (tests, one-off helpers).
var defaultHTTP = NewHTTPClient(64, false)

// Client returns t.HTTP, or a shared default client when it is nil.
func (t Target) Client() *http.Client {
	if t.HTTP != nil {
		return t.HTTP
	}
	return defaultHTTP
}

// Base returns BaseURL without trailing slashes and without a trailing "/v1": users often
// paste OpenAI-style base URLs ("http://host:8000/v1"), and every path we send starts at the
// server root.
func (t Target) Base() string {
	b := strings.TrimRight(t.BaseURL, "/")
	return strings.TrimRight(strings.TrimSuffix(b, "/v1"), "/")
}

// URL returns the absolute URL of path (which starts with "/") on the target.
func (t Target) URL(path string) string { return t.Base() + path }

// NewRequest builds a request to path on the target with its credentials and extra headers.
// A JSON body gets Content-Type application/json.
func (t Target) NewRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, t.URL(path), body)
	if err != nil {
		return nil, err
	}
	for k, vs := range t.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	switch {
	case t.APIKey != "" && t.KeyHeader != "":
		req.Header.Set(t.KeyHeader, t.APIKey)
	case t.APIKey != "":
		req.Header.Set("Authorization", "Bearer "+t.APIKey)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// CheckURL checks that the base URL is http(s)://host[:port]; api names the backend in the
// error, which never shows the API key.
func (t Target) CheckURL(api string) error {
	if u, err := url.Parse(t.URL("/")); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s: base URL %q: want http://host[:port] or https://host[:port]", api, t.Redact(t.BaseURL))
	}
	return nil
}

// Redact removes the API key from s. Every message that leaves a backend goes through it:
// servers sometimes echo the key they rejected ("invalid key sk-...").
func (t Target) Redact(s string) string {
	if t.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, t.APIKey, "[REDACTED]")
}
