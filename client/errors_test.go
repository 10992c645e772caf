package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"servebench/record"
)

func TestStatusClass(t *testing.T) {
	for status, want := range map[int]string{
		429: record.ErrRateLimited, 400: record.ErrHTTP4xx, 404: record.ErrHTTP4xx, 413: record.ErrHTTP4xx,
		500: record.ErrHTTP5xx, 503: record.ErrHTTP5xx, 302: record.ErrHTTP4xx,
	} {
		if got := StatusClass(status); got != want {
			t.Errorf("StatusClass(%d) = %q, want %q", status, got, want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	cases := []struct{ body, want string }{
		{`{"error":{"message":"bad model","type":"invalid_request_error","code":400}}`, "bad model"},
		{`{"error":"Input validation error: max_new_tokens too large","error_type":"validation"}`, "Input validation error: max_new_tokens too large"},
		{`{"object":"error","message":"too long","type":"BadRequestError","code":400}`, "too long"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{`{"detail":[{"loc":["body","model"],"msg":"field required"}]}`, `[{"loc":["body","model"],"msg":"field required"}]`},
		{`"plain json string"`, "plain json string"},
		{"<html>\n  <body>502 Bad Gateway</body>\n</html>\n", "<html> <body>502 Bad Gateway</body> </html>"},
		{`{"unrelated":1}`, `{"unrelated":1}`},
		{"", ""},
	}
	for _, tc := range cases {
		if got := ErrorMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("ErrorMessage(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
	long := ErrorMessage([]byte(strings.Repeat("é", 2000)))
	if len(long) > maxMessage+len("…") || !strings.HasSuffix(long, "…") || !strings.HasPrefix(long, "éé") {
		t.Errorf("long message not cut cleanly: %d bytes", len(long))
	}
}

func TestResponseError(t *testing.T) {
	tg := Target{APIKey: "sk-abc"}
	body := `{"error":{"message":"key sk-abc is invalid"}}` + strings.Repeat(" ", 10<<10) + "TAIL"
	resp := &http.Response{StatusCode: 401, Body: io.NopCloser(strings.NewReader(body))}
	e := ResponseError(tg, resp)
	if e.Class != record.ErrHTTP4xx || e.Status != 401 || e.Msg != "key [REDACTED] is invalid" {
		t.Errorf("got %+v", e)
	}
	resp = &http.Response{StatusCode: 502, Body: io.NopCloser(strings.NewReader(""))}
	if e := ResponseError(tg, resp); e.Msg != "Bad Gateway" || e.Error() != "http_5xx (HTTP 502): Bad Gateway" {
		t.Errorf("empty body: %+v", e)
	}
}

func TestContextError(t *testing.T) {
	tg := Target{}
	if e := ContextError(context.Background(), tg, io.EOF); e != nil {
		t.Errorf("live context: %v", e)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if e := ContextError(ctx, tg, io.EOF); e == nil || e.Class != record.ErrCancelled {
		t.Errorf("cancelled: %v", e)
	}
	ctx, cancel = context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	if e := ContextError(ctx, tg, io.EOF); e == nil || e.Class != record.ErrTimeout {
		t.Errorf("deadline: %v", e)
	}
	cctx, ccancel := context.WithCancelCause(context.Background())
	it := StartIdleTimer(10*time.Millisecond, ccancel)
	defer it.Stop()
	<-cctx.Done()
	if e := ContextError(cctx, tg, io.EOF); e == nil || e.Class != record.ErrTimeout || !strings.Contains(e.Msg, "10ms") {
		t.Errorf("idle: %v", e)
	}
	if e := TransportError(context.Background(), Target{APIKey: "k3y"}, errors.New("dial k3y refused")); e.Class != record.ErrConnect || e.Msg != "dial [REDACTED] refused" {
		t.Errorf("transport: %+v", e)
	}
}

// TestIdleTimer: reads re-arm the timer; silence fires it, at its timeout and not before; a
// nil timer is inert. In a synctest bubble the clock is the bubble's, so the bounds are exact
// and the test waits on no real time (it slept 1.2 s on the wall clock with a timeout 25
// times the gap between reads, which a loaded machine had once stretched past 100 ms).
func TestIdleTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = time.Second
		ctx, cancel := context.WithCancelCause(context.Background())
		it := StartIdleTimer(idle, cancel)
		defer it.Stop()
		r := it.Reader(strings.NewReader(strings.Repeat("x", 10)))
		buf := make([]byte, 1)
		for i := range 5 {
			time.Sleep(idle - time.Millisecond) // a byte just inside the timeout re-arms it
			synctest.Wait()
			if ctx.Err() != nil {
				t.Fatalf("read %d: fired although a byte arrived every %v", i, idle-time.Millisecond)
			}
			if _, err := r.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(idle - time.Millisecond)
		synctest.Wait()
		if ctx.Err() != nil {
			t.Fatalf("fired %v after the last byte, before its %v", idle-time.Millisecond, idle)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if !errors.Is(context.Cause(ctx), ErrIdleTimeout) {
			t.Fatalf("%v after the last byte: cause %v, want ErrIdleTimeout", idle, context.Cause(ctx))
		}
		var none *IdleTimer
		none.Reset()
		none.Stop()
		if StartIdleTimer(0, cancel) != nil || none.Reader(r) != r {
			t.Error("a zero idle timeout must be a nil, inert timer")
		}
	})
}
