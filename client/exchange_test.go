package client_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/client/ndjson"
	"servebench/client/sse"
)

const key = "sk-live-SECRET-777"

// lineDecoder treats every payload as content and "END" as the final one; a payload with
// "error" is an error event.
type lineDecoder struct{}

func (lineDecoder) Event(data []byte, o client.Observer) (bool, *client.Error) {
	if strings.Contains(string(data), "error") {
		return false, &client.Error{Class: "stream_error_event", Msg: string(data)}
	}
	o.Content(1)
	return string(data) == "END", nil
}
func (lineDecoder) Finished() bool { return false }

func exchange(t *testing.T, s clienttest.Stream, ndj bool, idle time.Duration) (*clienttest.Recorder, *clienttest.Server, error) {
	srv := clienttest.NewServer(t, s)
	tg := srv.Target()
	tg.APIKey = key
	x := client.Exchange{Target: tg, Path: "/x", Body: []byte(`{}`), Accept: "text/event-stream", IdleTimeout: idle,
		Read: func(ctx context.Context, r io.Reader, o client.Observer) error {
			if ndj {
				return client.ReadEvents(ctx, tg, ndjson.NewReader(r), lineDecoder{}, o)
			}
			return client.ReadEvents(ctx, tg, sse.NewReader(r), lineDecoder{}, o)
		}}
	rec := &clienttest.Recorder{}
	return rec, srv, x.Do(context.Background(), rec)
}

// TestExchangeRedactsKey: a server that echoes the rejected key, in an HTTP error or in a
// stream error event, never gets it into a message; the key is sent as a Bearer token.
func TestExchangeRedactsKey(t *testing.T) {
	for _, s := range []clienttest.Stream{
		{Status: 401, CType: "application/json", Body: `{"error":"invalid api key ` + key + `"}`},
		{Body: "data: a\n\ndata: {\"error\":\"bad key " + key + "\"}\n\n"},
		{Body: "event: error\ndata: key " + key + " revoked\n\n"},
	} {
		_, srv, err := exchange(t, s, false, 0)
		if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "REDACTED") {
			t.Errorf("error %v", err)
		}
		if h := (<-srv.Req).Header.Get("Authorization"); h != "Bearer "+key {
			t.Errorf("Authorization %q", h)
		}
	}
}

// TestExchangeEnds classifies the ways a native stream ends.
func TestExchangeEnds(t *testing.T) {
	for _, tc := range []struct {
		s     clienttest.Stream
		ndj   bool
		idle  time.Duration
		class string
	}{
		{clienttest.Stream{Body: "a\nb\nEND\n", Chunk: 1}, true, 0, ""},
		{clienttest.Stream{Body: "a\nb\n"}, true, 0, "truncated"},
		{clienttest.Stream{Body: "data: a\n\n", Stall: true}, false, 100 * time.Millisecond, "timeout"},
		{clienttest.Stream{Body: `{"a":1}`, CType: "application/json"}, false, 0, "decode"},
		{clienttest.Stream{Status: 429, Body: `{"error":"slow down"}`}, false, 0, "rate_limited"},
	} {
		rec, _, err := exchange(t, tc.s, tc.ndj, tc.idle)
		if got := clienttest.Class(t, err); got != tc.class {
			t.Errorf("%q: class %q (%v), want %q; calls %v", tc.s.Body, got, err, tc.class, rec.Events())
		}
	}
}
