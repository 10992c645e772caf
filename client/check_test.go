package client_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/client/sse"
)

// TestExchangeContentTypes: a stream is read under every content type real servers label
// streams with (and none at all); any other type is a decode error that names it and quotes
// the body, or gives the server's own message when the body is a JSON error object.
func TestExchangeContentTypes(t *testing.T) {
	for _, tc := range []struct {
		ctype, body, class, msg string
	}{
		{"text/event-stream; charset=utf-8", "data: END\n\n", "", ""},
		{"application/x-ndjson", "data: END\n\n", "", ""}, // framing is the reader's business
		{"text/plain; charset=utf-8", "data: END\n\n", "", ""},
		{"application/octet-stream", "data: END\n\n", "", ""},
		{"text/html", "<html><body>Sign in</body></html>", "decode", "expected an event stream, got text/html: <html><body>Sign in"},
		{"application/json", `{"id":"x","choices":[{"text":"hi"}]}`, "decode", `got application/json (did the server ignore "stream"?): {"id":"x"`},
		{"application/json", `{"error":{"message":"out of memory"}}`, "decode", "got application/json with the server's error: out of memory"},
		{"application/problem+json", `{"detail":"quota ` + key + `"}`, "decode", "server's error: quota [REDACTED]"},
		{"text/html", strings.Repeat("é", 300), "decode", strings.Repeat("é", 100) + "…"},
		{"image/png", "\x89PNG\r\n\x1a\n\x00\x00", "decode", "got image/png: ?PNG ? ??"},
	} {
		_, _, err := exchange(t, clienttest.Stream{CType: tc.ctype, Body: tc.body}, false, 0)
		if got := clienttest.Class(t, err); got != tc.class || (tc.msg != "" && !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%s %.40q: %v, want class %q with %q", tc.ctype, tc.body, err, tc.class, tc.msg)
		}
	}
}

// gzipSSE is "data: END" compressed.
func gzipSSE() []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	io.WriteString(zw, "data: a\n\ndata: END\n\n")
	zw.Close()
	return b.Bytes()
}

// TestExchangeGzip: servebench asks for no compression, so a gzip stream it did not ask for
// is a decode error naming the encoding; asked for with --header Accept-Encoding=gzip, it is
// decompressed and read.
func TestExchangeGzip(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gzipSSE())
	}))
	defer srv.Close()
	for _, tc := range []struct {
		accept, class string
	}{{"", "decode"}, {"gzip", ""}, {"br, gzip;q=0.5", ""}, {"gzip;q=0", "decode"}, {"br", "decode"}} {
		tg := client.Target{BaseURL: srv.URL, HTTP: client.NewHTTPClient(2, false), Header: http.Header{}}
		if tc.accept != "" {
			tg.Header.Set("Accept-Encoding", tc.accept)
		}
		rec := &clienttest.Recorder{}
		x := client.Exchange{Target: tg, Path: "/x", Body: []byte(`{}`), Accept: "text/event-stream",
			Read: func(ctx context.Context, r io.Reader, o client.Observer) error {
				return client.ReadEvents(ctx, tg, sse.NewReader(r), lineDecoder{}, o)
			}}
		err := x.Do(context.Background(), rec)
		if got := clienttest.Class(t, err); got != tc.class {
			t.Errorf("Accept-Encoding %q: %v, want class %q", tc.accept, err, tc.class)
		}
		if tc.class != "" && !strings.Contains(err.Error(), "server sent Content-Encoding gzip that was not asked for") {
			t.Errorf("Accept-Encoding %q: message %v", tc.accept, err)
		}
	}
}

// TestRedirects: a benchmark request is never redirected (the 3xx is an error naming its
// Location) and so never carries its credentials to another host; the requests before a run
// follow a redirect on the same host only.
func TestRedirects(t *testing.T) {
	var stolen atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stolen.Add(1)
		w.Write([]byte(`{"data":[{"id":"elsewhere"}]}`))
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models": // same host: followed
			http.Redirect(w, r, "/v1/models/", http.StatusMovedPermanently)
		case "/v1/models/":
			w.Write([]byte(`{"data":[{"id":"here"}]}`))
		case "/tokenize", "/x": // another host: not followed
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	tg := client.Target{BaseURL: srv.URL, APIKey: key, Header: http.Header{"X-Api-Key": {"hdr-secret"}}, HTTP: client.NewHTTPClient(2, false)}
	if ids, err := client.ListModels(context.Background(), tg); err != nil || len(ids) != 1 || ids[0] != "here" {
		t.Errorf("same-host redirect: %v %v", ids, err)
	}
	if _, err := client.Tokenize(context.Background(), tg, "", "a b"); err == nil {
		t.Error("a cross-host redirect of /tokenize was followed")
	}
	x := client.Exchange{Target: tg, Path: "/x", Body: []byte(`{}`), Accept: "text/event-stream",
		Read: func(context.Context, io.Reader, client.Observer) error { return nil }}
	err := x.Do(context.Background(), &clienttest.Recorder{})
	if got := clienttest.Class(t, err); got != "http_4xx" || !strings.Contains(err.Error(), "HTTP 307") || !strings.Contains(err.Error(), "redirect to "+other.URL+"/x not followed") {
		t.Errorf("benchmark request redirected elsewhere: %v", err)
	}
	if n := stolen.Load(); n != 0 {
		t.Errorf("%d requests reached the other host", n)
	}
}
