package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// Helpers for OpenAI-compatible servers (vLLM, SGLang, llama.cpp, Ollama, TGI ...) used before
// a run: are you up, which models do you serve, how long is this prompt.

// ErrNoTokenizer is returned by Tokenize when the server has no /tokenize endpoint.
var ErrNoTokenizer = errors.New("server has no tokenize endpoint")

// readyPoll is the interval between readiness probes: fast enough that a run starts within a
// fraction of a second of the server, slow enough not to load a server that is loading.
const readyPoll = 250 * time.Millisecond

// ListModels returns the ids of the models the server lists at GET /v1/models.
func ListModels(ctx context.Context, t Target) ([]string, error) {
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := getJSON(ctx, t, "/v1/models", &out); err != nil {
		return nil, fmt.Errorf("list models: %w", err)
	}
	ids := make([]string, len(out.Data))
	for i, m := range out.Data {
		ids[i] = m.ID
	}
	return ids, nil
}

// WaitReady polls the server every 250 ms until it answers 200, or fails after timeout with
// a one-line error naming the URL and the last reason, e.g.
// "server at http://127.0.0.1:1 not ready after 60s: dial tcp 127.0.0.1:1: connect: connection refused".
//
// GET /health is asked first (vLLM, SGLang, llama.cpp, TGI): 200 is ready, and any status
// other than 404 (llama.cpp's 503 while loading a model) is "not yet". A server without
// /health (Ollama) is ready when GET /v1/models answers 200.
func WaitReady(ctx context.Context, t Target, timeout time.Duration) error {
	return WaitReadyNotify(ctx, t, timeout, nil)
}

// WaitReadyNotify is WaitReady that calls notify (when not nil) after every probe that
// failed, with the time waited so far and the probe's error (its URL redacted), so that a
// caller can say what it waits for instead of printing nothing for a minute.
func WaitReadyNotify(ctx context.Context, t Target, timeout time.Duration, notify func(waited time.Duration, err error)) error {
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	var last error
	for {
		err := probeReady(wctx, t)
		if err == nil {
			return nil
		}
		var ns *NotServedError
		if errors.As(err, &ns) {
			return err // an answer, not a server still starting: waiting longer changes nothing
		}
		// A probe cut short by the overall timeout says less than the one before it.
		if last == nil || wctx.Err() == nil {
			last = err
			if notify != nil {
				notify(time.Since(start), errors.New(t.Redact(err.Error())))
			}
		}
		select {
		case <-tick.C:
		case <-wctx.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("wait for server at %s: %w", t.Base(), context.Cause(ctx))
			}
			return &NotReadyError{Base: t.Base(), Timeout: timeout, Last: t.Redact(last.Error()), Refused: isRefused(last)}
		}
	}
}

// probeReady makes one readiness check.
func probeReady(ctx context.Context, t Target) error {
	// One probe may not use all the remaining time: a hung first probe would hide later ones.
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	status, err := get(pctx, t, "/health")
	if err != nil || status == http.StatusOK {
		return err
	}
	if status != http.StatusNotFound {
		return fmt.Errorf("GET /health: HTTP %d", status)
	}
	status, err = get(pctx, t, "/v1/models")
	if err != nil || status == http.StatusOK {
		return err
	}
	// Triton serves neither: its readiness is part of the KServe v2 protocol
	st, err := get(pctx, t, "/v2/health/ready")
	if err == nil && st == http.StatusOK {
		return nil
	}
	if status == http.StatusNotFound && err == nil && st == http.StatusNotFound {
		return &NotServedError{Base: t.Base()}
	}
	return fmt.Errorf("GET /health: HTTP 404, GET /v1/models: HTTP %d", status)
}

// NotReadyError is a server that did not answer ready within the wait's timeout.
type NotReadyError struct {
	Base    string
	Timeout time.Duration
	Last    string // the last probe's error, redacted
	Refused bool   // the last probe's connection was refused: nothing listens there (yet)
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("server at %s not ready after %s: %s", e.Base, seconds(e.Timeout), e.Last)
}

// NotServedError is an HTTP server that answers 404 on every readiness path (/health,
// /v1/models, /v2/health/ready): an address that reaches a web server but no inference
// server's root, most often a URL with a path the server does not serve. No wait mends it.
type NotServedError struct{ Base string }

func (e *NotServedError) Error() string {
	return fmt.Sprintf("no inference server at %s: GET /health, /v1/models and /v2/health/ready all answered HTTP 404; "+
		"give the server's base URL, e.g. http://HOST:PORT, with no API path (a reverse proxy's own path prefix is kept)", e.Base)
}

// isRefused reports whether err is a refused connection (ECONNREFUSED).
func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// get sends a GET and returns the status, discarding the body. Transport errors lose their
// `Get "url":` prefix: the caller names the server once.
func get(ctx context.Context, t Target, path string) (int, error) {
	req, err := t.NewRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := t.Client().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// seconds formats a duration the way people write timeouts: "60s", "1.5s", "250ms".
func seconds(d time.Duration) string {
	if d >= time.Second {
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
	}
	return d.String()
}

// Tokenize returns the number of tokens the server's tokenizer makes of text, without
// special tokens (no BOS), so that prompt lengths mean the same on every server. It speaks
// every dialect in one body: vLLM/SGLang read "prompt" and "add_special_tokens", llama.cpp
// reads "content" and "add_special", TGI reads "inputs". The answer is "count" (vLLM), the
// length of "tokens" (vLLM, SGLang, llama.cpp), or a bare array of token objects (TGI). A
// server without the endpoint (404, 405, 501) gives ErrNoTokenizer (Ollama has none).
func Tokenize(ctx context.Context, t Target, model, text string) (int, error) {
	m := map[string]any{"prompt": text, "content": text, "inputs": text, "add_special": false, "add_special_tokens": false}
	if model != "" {
		m["model"] = model
	}
	body, err := json.Marshal(m)
	if err != nil {
		return 0, err
	}
	var raw json.RawMessage
	err = postJSON(ctx, t, "/tokenize", body, &raw)
	var ce *Error
	if errors.As(err, &ce) && (ce.Status == 404 || ce.Status == 405 || ce.Status == 501) {
		return 0, ErrNoTokenizer
	}
	if err != nil {
		return 0, fmt.Errorf("tokenize: %w", err)
	}
	var list []json.RawMessage // TGI: [{"id":..,"text":..,"start":..,"stop":..}, ...]
	if json.Unmarshal(raw, &list) == nil {
		return len(list), nil
	}
	var out struct {
		Count  *int              `json:"count"`
		Tokens []json.RawMessage `json:"tokens"` // ints, or objects when pieces are asked for
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return 0, fmt.Errorf("tokenize: decode answer: %w", err)
	}
	if out.Count != nil {
		return *out.Count, nil
	}
	if out.Tokens == nil {
		return 0, fmt.Errorf("tokenize: answer has neither count nor tokens")
	}
	return len(out.Tokens), nil
}

// getJSON GETs path and decodes a 200 answer into out.
func getJSON(ctx context.Context, t Target, path string, out any) error {
	req, err := t.NewRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	return doJSON(t, req, out)
}

// postJSON POSTs body to path and decodes a 200 answer into out.
func postJSON(ctx context.Context, t Target, path string, body []byte, out any) error {
	req, err := t.NewRequest(ctx, http.MethodPost, path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	// A tokenize call may be sent again: marked idempotent (a key present but empty is not
	// sent on the wire), net/http retries it on a fresh connection when the server had closed
	// the kept-alive one it was written to, as llama.cpp does between requests ("EOF")
	req.Header["Idempotency-Key"] = nil
	return doJSON(t, req, out)
}

// doJSON sends req and decodes a 2xx JSON answer into out. A non-2xx answer is an *Error
// with the server's message.
func doJSON(t Target, req *http.Request, out any) error {
	req.Header.Set("Accept", "application/json")
	resp, err := t.Client().Do(req)
	if err != nil {
		return errors.New(t.Redact(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return ResponseError(t, resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", req.Method, req.URL.Path, err)
	}
	return nil
}
