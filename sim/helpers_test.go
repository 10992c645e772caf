package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testClient is a plain net/http client sized for many concurrent streams (the tests may
// not use package client: the simulator must be checked independently of it).
var testClient = &http.Client{Transport: &http.Transport{
	MaxIdleConnsPerHost: 4096, MaxConnsPerHost: 0, DisableCompression: true,
}}

// startSim starts a server on a free loopback port and closes it at the end of the test.
func startSim(t testing.TB, c Config) (*Server, string) {
	t.Helper()
	s, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, base
}

// fixedConfig is a fixed-mode config with the given TTFT and ITL.
func fixedConfig(ttft, itl time.Duration) Config {
	c := DefaultConfig()
	c.Addr = "127.0.0.1:0"
	c.TTFT, c.ITL = ttft, itl
	return c
}

// post sends a JSON body with optional headers (pairs).
func post(t testing.TB, url string, body any, hdr ...string) *http.Response {
	t.Helper()
	resp, _ := postTimed(t, url, body, hdr...)
	return resp
}

// postTimed is post that also returns when the request was completely written (docs/design/METRICS.md's
// "sent", from which TTFT is measured).
func postTimed(t testing.TB, url string, body any, hdr ...string) (*http.Response, time.Time) {
	t.Helper()
	b, _ := json.Marshal(body)
	// WroteRequest runs on the transport's writer goroutine and may even fire after Do
	// returns (an early error response), hence the atomic.
	var sent atomic.Pointer[time.Time]
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { now := time.Now(); sent.Store(&now) }}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	if p := sent.Load(); p != nil {
		return resp, *p
	}
	return resp, time.Time{}
}

// sseEvent is one event as the test client read it.
type sseEvent struct {
	at      time.Time // when its data line was read
	id      string
	field   string // "data", or the field of another line (llama.cpp's "error")
	data    string // the line's value
	comment bool
}

// readSSE reads a stream to its end. err is the read error that ended it (nil at clean EOF).
func readSSE(body io.Reader) (evs []sseEvent, err error) {
	r := bufio.NewReader(body)
	var cur sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return evs, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if cur.data != "" || cur.comment {
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, ":"):
			cur.comment, cur.at = true, time.Now()
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		default:
			cur.field, cur.data, _ = strings.Cut(line, ": ")
			cur.at = time.Now()
		}
	}
}

// chunk is the decoded shape of a streamed completion or chat chunk.
type chunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Text  string `json:"text"`
		Delta struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Total      int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// decoded is a stream split into its parts.
type decoded struct {
	content  []sseEvent // events carrying generated text
	chunks   []chunk    // every JSON data event, in order
	text     string
	done     bool // saw [DONE]
	badJSON  int
	comments int
}

func decode(t testing.TB, evs []sseEvent) decoded {
	t.Helper()
	var d decoded
	for _, e := range evs {
		if e.comment && e.data == "" {
			d.comments++
			continue
		}
		if e.data == "[DONE]" {
			d.done = true
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			d.badJSON++
			continue
		}
		d.chunks = append(d.chunks, c)
		if len(c.Choices) > 0 {
			txt := c.Choices[0].Text
			if c.Choices[0].Delta.Content != nil {
				txt = *c.Choices[0].Delta.Content
			}
			if txt != "" {
				d.content = append(d.content, e)
				d.text += txt
			}
		}
	}
	return d
}

// completion is a streaming completions body of n tokens with a fixed length.
func completion(prompt string, n int) map[string]any {
	return map[string]any{"prompt": prompt, "max_tokens": n, "ignore_eos": true, "stream": true,
		"stream_options": map[string]any{"include_usage": true}}
}

// words is a prompt of exactly n tokens.
func words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = vocab[i%len(vocab)]
	}
	return strings.Join(w, " ")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func formatInt(i int) string { return strconv.Itoa(i) }
