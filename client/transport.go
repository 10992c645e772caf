package client

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// NewHTTPClient returns an HTTP client whose one Transport is shared by every request of a
// run and sized to its concurrency maxConns (ARCHITECTURE.md):
//   - MaxIdleConnsPerHost >= maxConns, so a closed loop of N users keeps N connections warm
//     instead of re-dialling (Go's default of 2 would put connection set-up into latencies);
//   - MaxConnsPerHost 0 (no cap): the load generator, not the transport, decides concurrency;
//   - no compression: gzip would buffer stream events and hide their arrival times;
//   - no overall Timeout: long streams are legal; callers use per-request contexts and the
//     backends' idle-stream timeout instead;
//   - 64 KiB read and write buffers: fewer syscalls for large prompts and fast streams.
//
// TLS certificates are verified unless insecure is set. Proxies are taken from the
// environment as usual (Go never proxies loopback addresses).
func NewHTTPClient(maxConns int, insecure bool) *http.Client {
	idle := max(maxConns, 2)
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          0, // no global cap
		MaxIdleConnsPerHost:   idle,
		MaxConnsPerHost:       0,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
		ReadBufferSize:        64 << 10,
		WriteBufferSize:       64 << 10,
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // user's explicit choice
	}
	return &http.Client{Transport: tr}
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
	if t.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.APIKey)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// Redact removes the API key from s. Every message that leaves a backend goes through it:
// servers sometimes echo the key they rejected ("invalid key sk-...").
func (t Target) Redact(s string) string {
	if t.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, t.APIKey, "[REDACTED]")
}
