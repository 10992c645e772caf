package client

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// TestTokenizeRetriedOnClosedConnection: a server that answers one request per connection
// and then closes it without saying so (llama.cpp's HTTP server between requests) makes the
// next tokenize call, written to that kept-alive connection, read EOF; the call is sent again
// on a fresh connection instead of failing ("tokenize: EOF" failed a sweep's second point).
func TestTokenizeRetriedOnClosedConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				if _, err := http.ReadRequest(br); err != nil {
					return
				}
				body := `{"tokens":[1,2,3]}`
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				// the next request on this connection is read, then the connection closes
				// without an answer (and without Connection: close on the first)
				_, _ = http.ReadRequest(br)
			}(c)
		}
	}()
	tg := Target{BaseURL: "http://" + ln.Addr().String(), HTTP: NewHTTPClient(1, false)}
	for i := range 3 {
		n, err := Tokenize(context.Background(), tg, "", "hello there")
		if err != nil || n != 3 {
			t.Fatalf("call %d: %d tokens, %v", i+1, n, err)
		}
	}
	if c := conns.Load(); c < 2 {
		t.Errorf("%d connections: the closed one was not replaced", c)
	}
}
