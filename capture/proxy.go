// Package capture is a transparent streaming proxy that records the requests it passes as a
// Mooncake trace (docs/workloads.md, "Capture and replay"): each request's arrival, API,
// session key, token counts and prompt prefix structure as block hashes, without the prompt's
// text unless asked. `run --dataset mooncake:FILE` replays the file.
package capture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"servebench/client"
)

// Encoder turns text into token ids. ok is false when the ids are an approximation (words).
type Encoder interface {
	Encode(ctx context.Context, text string) (ids []int, exact bool, err error)
}

// EncoderFunc adapts a function to Encoder.
type EncoderFunc func(ctx context.Context, text string) ([]int, bool, error)

// Encode calls f.
func (f EncoderFunc) Encode(ctx context.Context, text string) ([]int, bool, error) {
	return f(ctx, text)
}

// Config is what the proxy needs.
type Config struct {
	Upstream    *url.URL
	BlockTokens int  // tokens a hash block; 0 means 512, Mooncake's
	KeepText    bool // record the prompts' text and the session keys as they are
	// SessionHeader, when set, is a request header that carries the session key (a KV-aware
	// router's); it wins over the body's keys.
	SessionHeader string
	// Encoder counts and hashes prompts; nil asks the upstream's /tokenize, with the request's
	// own credentials, and falls back to words where it has none.
	Encoder Encoder
	// Transport reaches the upstream; nil is http.DefaultTransport's settings.
	Transport http.RoundTripper
	// Log receives the proxy's errors (never a header); nil discards them.
	Log io.Writer
}

// maxBody bounds the request and answer bytes kept for recording: past it the request still
// passes through whole, but is not recorded.
const maxBody = 64 << 20

// Proxy is the capturing proxy, an http.Handler.
type Proxy struct {
	cfg   Config
	rp    *httputil.ReverseProxy
	rec   *Recorder
	wg    sync.WaitGroup
	slots chan struct{} // bounds the requests being counted at once
	mu    sync.Mutex
	notes []string
	words bool // the upstream has no /tokenize: count words from now on
}

// exchangeKey carries an exchange through the reverse proxy's request context.
type exchangeKey struct{}

// exchange is what the proxy saw of one recorded request's answer.
type exchange struct {
	status   int
	body     bytes.Buffer
	overflow bool
	eof      bool
}

// recordingBody keeps what the client is sent, as it passes.
type recordingBody struct {
	io.ReadCloser
	ex *exchange
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.ex.body.Len()+n <= maxBody {
		b.ex.body.Write(p[:n])
	} else {
		b.ex.overflow = true
	}
	if errors.Is(err, io.EOF) {
		b.ex.eof = true
	}
	return n, err
}

// New returns a proxy recording to rec.
func New(cfg Config, rec *Recorder) (*Proxy, error) {
	if cfg.Upstream == nil || cfg.Upstream.Host == "" {
		return nil, errors.New("capture: no upstream")
	}
	if cfg.BlockTokens <= 0 {
		cfg.BlockTokens = 512
	}
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
	p := &Proxy{cfg: cfg, rec: rec, slots: make(chan struct{}, 4)}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(cfg.Upstream)
			pr.Out.Host = cfg.Upstream.Host
			if _, ok := pr.Out.Header["Idempotency-Key"]; !ok && pr.Out.GetBody != nil {
				// a key present but empty is not sent; it lets net/http send the request
				// again on a fresh connection when the server had closed the kept-alive one
				// it was written to (llama.cpp does between requests), as a client would
				pr.Out.Header["Idempotency-Key"] = nil
			}
		},
		// every write is flushed at once: an SSE event reaches the client as the server sent it
		FlushInterval: -1,
		Transport:     cfg.Transport,
		ErrorLog:      log.New(logw, "servebench capture: ", 0),
		ModifyResponse: func(resp *http.Response) error {
			ex, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
			if ex != nil {
				ex.status = resp.StatusCode
				resp.Body = &recordingBody{ReadCloser: resp.Body, ex: ex}
			}
			return nil
		},
	}
	return p, nil
}

// ServeHTTP passes r to the upstream and its answer back, unbuffered, recording a request to
// a generation endpoint.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api := apiOf(r.Method, r.URL.Path)
	if api == "" {
		if r.ContentLength > 0 && r.ContentLength <= 1<<20 {
			// a small body (a tokenize call) is kept so that it can be sent again
			if body, err := io.ReadAll(r.Body); err == nil {
				rewindable(r, body)
			}
		}
		p.rp.ServeHTTP(w, r)
		return
	}
	p.wg.Add(1)
	defer p.wg.Done()
	seq, at := p.rec.Arrive()
	settled := false
	defer func() {
		// the reverse proxy aborts a response whose upstream failed mid-body with a panic
		// (http.ErrAbortHandler), which must still settle the request's place in the file
		if !settled {
			p.rec.Skip(seq, "the answer was cut short")
		}
	}()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		settled = true
		p.rec.Skip(seq, "the request body could not be read")
		http.Error(w, "servebench capture: read the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	ex := &exchange{}
	if len(body) <= maxBody {
		// the body was read whole: the upstream gets it from memory, with its length (we
		// tried a reader that went on to the incoming body: read again while the answer
		// streamed, it cut some streams under load)
		rewindable(r, body)
	} else {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	}
	// the answer is parsed to be recorded: ask for it uncompressed
	r.Header.Del("Accept-Encoding")
	header := r.Header.Clone()
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex)))
	end := p.rec.Now()
	settled = true
	switch {
	case len(body) > maxBody || ex.overflow:
		p.rec.Skip(seq, "over 64 MiB")
		return
	case ex.status == 0:
		p.rec.Skip(seq, "the upstream did not answer")
		return
	case ex.status/100 != 2:
		p.rec.Skip(seq, fmt.Sprintf("answered %d", ex.status))
		return
	case !ex.eof:
		p.rec.Skip(seq, "the answer was cut short")
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.slots <- struct{}{}
		defer func() { <-p.slots }()
		p.count(seq, at, end, api, body, header, ex)
	}()
}

// rewindable makes r send body from memory, and send it again where net/http retries.
func rewindable(r *http.Request, body []byte) {
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
}

// count builds a request's line once its answer has passed: counting the prompt may ask the
// upstream's tokenizer, which must not delay the answer.
func (p *Proxy) count(seq int, at, end time.Duration, api string, body []byte, h http.Header, ex *exchange) {
	pr, ok := parsePrompt(body)
	if !ok {
		p.rec.Skip(seq, "the request is not JSON")
		return
	}
	u := parseAnswer(ex.body.Bytes())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ids, exact := pr.ids, true
	if ids == nil {
		var err error
		if ids, exact, err = p.encode(ctx, pr.text, pr.model, h); err != nil {
			p.rec.Skip(seq, "its prompt could not be tokenized")
			p.note("tokenize: " + err.Error())
			return
		}
	}
	in := len(ids)
	hashes := blockHashes(ids, p.cfg.BlockTokens)
	if !exact && u.input != nil && *u.input > 0 {
		// counted in words: the server's count is the better length, and the blocks are cut to
		// it so that the trace stays readable (input_length above every block but the last)
		in = *u.input
		hashes = hashes[:min(len(hashes), (in+p.cfg.BlockTokens-1)/p.cfg.BlockTokens)]
	}
	out := 0
	switch {
	case u.output != nil:
		out = *u.output
	case u.text.Len() > 0:
		if oids, _, err := p.encode(ctx, u.text.String(), pr.model, h); err == nil {
			out = len(oids)
		} else {
			out = u.events
		}
	}
	if in < 1 || out < 1 {
		p.rec.Skip(seq, "no prompt or no output tokens")
		return
	}
	e := &entry{hashes: hashes, line: Line{InputLength: in, OutputLength: out, API: api,
		CachedTokens: u.cached, ServerInputTokens: u.input}}
	if k := h.Get(p.cfg.SessionHeader); p.cfg.SessionHeader != "" && k != "" {
		pr.session = k
	}
	e.line.SessionID = p.anonymise(pr.session)
	if p.cfg.KeepText {
		e.line.Text, _ = json.Marshal(pr.text)
		if pr.messages != nil {
			e.line.Text = pr.messages
		}
	}
	p.rec.finish(seq, at, end, e)
}

// anonymise is a session key as recorded: hashed (the same key, the same hash) unless the
// text is kept.
func (p *Proxy) anonymise(key string) string {
	if key == "" || p.cfg.KeepText {
		return key
	}
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:8])
}

// encode returns text's token ids: by the configured encoder, else the upstream's /tokenize
// (with the request's own credentials), else one id per word.
func (p *Proxy) encode(ctx context.Context, text, model string, h http.Header) ([]int, bool, error) {
	if p.cfg.Encoder != nil {
		return p.cfg.Encoder.Encode(ctx, text)
	}
	p.mu.Lock()
	words := p.words
	p.mu.Unlock()
	if !words {
		t := client.Target{BaseURL: strings.TrimSuffix(p.cfg.Upstream.String(), "/"), Header: authHeaders(h), HTTP: p.client()}
		ids, err := client.TokenIDs(ctx, t, model, text)
		switch {
		case err == nil:
			return ids, true, nil
		case !errors.Is(err, client.ErrNoTokenizer):
			return nil, false, err
		}
		p.mu.Lock()
		p.words = true
		p.mu.Unlock()
		p.note("the upstream has no /tokenize: prompts are counted and hashed in words (--tokenizer FILE makes them exact)")
	}
	ids, _, err := Words.Encode(ctx, text)
	return ids, false, err
}

func (p *Proxy) client() *http.Client {
	if p.cfg.Transport != nil {
		return &http.Client{Transport: p.cfg.Transport}
	}
	return http.DefaultClient
}

// authHeaders are the request's credentials, for the proxy's own tokenize calls.
func authHeaders(h http.Header) http.Header {
	out := http.Header{}
	for _, k := range []string{"Authorization", "X-Api-Key", "Api-Key"} {
		if v := h.Values(k); len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

// note keeps a message once.
func (p *Proxy) note(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.notes {
		if n == s {
			return
		}
	}
	p.notes = append(p.notes, s)
}

// Notes are what the proxy noticed, each once: a fallback taken, an error.
func (p *Proxy) Notes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.notes...)
}

// Wait waits for the requests in flight and being counted (after the server stopped taking
// new ones).
func (p *Proxy) Wait() { p.wg.Wait() }

// Words is the fallback encoder: one id per whitespace-separated word, the word's hash.
var Words = EncoderFunc(func(_ context.Context, text string) ([]int, bool, error) {
	fs := strings.Fields(text)
	ids := make([]int, len(fs))
	for i, f := range fs {
		var h uint32 = 2166136261
		for j := 0; j < len(f); j++ {
			h = (h ^ uint32(f[j])) * 16777619
		}
		ids[i] = int(h)
	}
	return ids, false, nil
})
