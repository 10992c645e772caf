package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"servebench/client"
	"servebench/client/apis"
	"servebench/record"
	"servebench/runspec"
	"servebench/sim"
	"servebench/tokenizer"
	"servebench/workload"
)

// startTarget starts the simulator when no URL was given, waits for the server, resolves
// --api auto and picks the model.
func (b *Session) startTarget(ctx context.Context) error {
	s := &b.spec
	if s.URL == "" {
		c := sim.DefaultConfig()
		// fine histogram buckets: the summary's server figures then check ours to a few per
		// cent instead of to vLLM's coarse buckets (nobody's dashboard reads this one)
		c.HistogramBuckets = "fine"
		if _, path := s.DatasetOf(); s.AnswersDataset() {
			c.AnswersFile = path // the built-in simulator answers from the run's own key, all right
		}
		srv, err := sim.New(c)
		if err != nil {
			return fmt.Errorf("start simulator: %w", err)
		}
		url, err := srv.Start("127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("start simulator: %w", err)
		}
		b.sim, s.URL = srv, url
		b.logf("no --url: benchmarking the built-in SIMULATED server at %s (not a real server)", url)
	}
	if base, dropped := client.APIBase(s.URL); dropped != "" {
		hint := ""
		if api, ok := endpointAPI[dropped]; ok && api != s.API {
			hint = fmt.Sprintf(" (--api %s is the API that sends there)", api)
		}
		b.logf("--url: benchmarking the server at %s: servebench adds each endpoint's path itself, so the URL's %s is left out%s", runspec.RedactURL(base), dropped, hint)
		s.URL = base // the records header holds the base too: the same server, however it was written
	}
	hdr, err := runspec.ParseHeaders(s.Headers)
	if err != nil {
		return err
	}
	conns := max(s.Concurrency, s.MaxConcurrency, 64)
	b.target = client.Target{BaseURL: strings.TrimRight(s.URL, "/"), APIKey: s.APIKey, Header: hdr,
		HTTP: client.NewHTTPClientClocks(conns, s.Insecure, client.Clocks{Arrivals: s.ArrivalClock == "kernel", Sends: s.SendClock == "kernel"})}
	if err := client.WaitReadyNotify(ctx, b.target, s.ReadyTimeout, b.waiting()); err != nil {
		if ctx.Err() != nil { // Ctrl-C while waiting: an interruption, not a server fault
			return fmt.Errorf("waiting for the server: %w", ctx.Err())
		}
		return notReady(err, s)
	}
	if err := b.resolveAPI(ctx); err != nil {
		return err
	}
	b.simulated = b.sim != nil || detectSimulator(ctx, b.target)
	if s.Model == "" {
		models, err := client.ListModels(ctx, b.target)
		if ctx.Err() != nil {
			return fmt.Errorf("listing the server's models: %w", ctx.Err())
		}
		if err != nil || len(models) == 0 {
			msg := "empty list"
			if err != nil {
				msg = err.Error()
			}
			return fmt.Errorf("no --model given and %s/v1/models listed none: %s", runspec.RedactURL(b.target.BaseURL), s.Redact(msg))
		}
		s.Model = models[0]
	}
	return nil
}

// endpointAPI is the --api that sends to an endpoint path a user may paste with the URL,
// so that a URL ending in /v1/chat/completions on a run of another API says which one would.
var endpointAPI = map[string]string{
	"/v1/completions": "openai-completions", "/v1/chat/completions": "openai-chat", "/v1/responses": "openai-responses",
	"/v1/messages": "anthropic-messages", "/v1/embeddings": "openai-embeddings", "/v1/rerank": "rerank",
	"/api/generate": "ollama", "/api/chat": "ollama-chat", "/generate_stream": "tgi", "/generate": "sglang",
	"/completion": "llamacpp",
}

// resolveAPI replaces --api auto with the family the server's endpoints reveal, and checks
// what an API needs before any model lookup.
func (b *Session) resolveAPI(ctx context.Context) error {
	s := &b.spec
	if s.API == "auto" {
		s.API = apis.Detect(ctx, b.target)
		b.logf("--api auto: the server speaks %s", s.API)
	}
	if err := b.spec.CheckTextAPI(s.API); err != nil { // answers.go
		return err
	}
	if needsModel(s.API) && s.Model == "" {
		return runspec.Usagef("--model is required with --api %s (it lists no models), e.g. --model ensemble", s.API)
	}
	return nil
}

// simulatorProbe asks the server whether it is servebench's simulator (its /version answer
// says so), so that a run against a standalone `servebench sim` is labelled simulated too.
var simulatorProbe = client.Probe{Path: "/version", Key: "simulator", Want: "true"}

func detectSimulator(ctx context.Context, t client.Target) bool { return simulatorProbe.Match(ctx, t) }

// promptTokenizer returns the tokenizer prompt lengths are measured with, and names it for
// the records header: the local --tokenizer file when given, else the server's tokenize
// endpoint, else nil (lengths are approximate; Ollama and Triton have no endpoint).
func (b *Session) promptTokenizer(ctx context.Context) (workload.Tokenizer, error) {
	s := &b.spec
	if s.Tokenizer != "" {
		tk, err := tokenizer.Load(s.Tokenizer)
		if err != nil {
			return nil, runspec.Usagef("--tokenizer: %v", err)
		}
		b.tokName = "local:" + filepath.Base(s.Tokenizer)
		return tk, nil
	}
	tok := workload.TokenizerFunc(func(ctx context.Context, text string) (int, error) {
		return client.Tokenize(ctx, b.target, s.Model, text)
	})
	if _, err := tok.Count(ctx, "hello"); errors.Is(err, client.ErrNoTokenizer) {
		b.logf("the server has no tokenize endpoint: prompt lengths are approximate (--tokenizer FILE makes them exact)")
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("tokenize: %s", s.Redact(err.Error()))
	}
	b.tokName = "server:/tokenize"
	return tok, nil
}

// backend returns the run's backend, watched so that a run in which every request failed can
// say why (see allFailed).
func (b *Session) backend() (client.Backend, error) {
	be, err := newBackend(b.target, b.spec.API, b.spec.Model, b.spec.IdleTimeout, b.spec.Batch())
	if err != nil {
		return nil, err
	}
	if b.watch == nil {
		b.watch = &watchedBackend{}
	}
	b.watch.Backend = be
	return b.watch, nil
}

// watchedBackend remembers whether any request succeeded and the first failure's message.
type watchedBackend struct {
	client.Backend
	mu    sync.Mutex
	ok    bool
	first string
}

// Do implements client.Backend.
func (w *watchedBackend) Do(ctx context.Context, req *client.Request, obs client.Observer) error {
	err := w.Backend.Do(ctx, req, obs)
	var ce *client.Error
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case err == nil:
		w.ok = true
	case w.first == "" && errors.As(err, &ce) && ce.Class != record.ErrCancelled:
		w.first = ce.Error()
	}
	return err
}

// AllFailedError is a run in which not one request succeeded: an exit status of 0 with
// nothing measured would let a CI job pass on a misconfigured run (a wrong model name, a
// wrong --api), and the first failure carries the server's own message.
type AllFailedError struct{ First string }

func (e *AllFailedError) Error() string { return "every request failed; the first: " + e.First }

// allFailed is the session's AllFailedError, or nil when a request succeeded (or none failed).
func (b *Session) allFailed() error {
	w := b.watch
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ok || w.first == "" {
		return nil
	}
	return &AllFailedError{First: b.spec.Redact(w.first)}
}

// waitingEvery is how often the ready wait says it is still waiting, after its first line
// (at the first failed probe, so a closed port is reported at once).
const (
	waitingEvery = 10 * time.Second
	waitingMin   = 5 * time.Second
)

// waiting returns the ready wait's notice: "waiting for URL: connection refused, 12 s of 60";
// nil for a wait shorter than waitingMin, whose own error comes soon enough.
func (b *Session) waiting() func(time.Duration, error) {
	if b.spec.ReadyTimeout < waitingMin {
		return nil
	}
	var next time.Duration
	return func(waited time.Duration, err error) {
		if waited < next {
			return
		}
		next = waited + waitingEvery
		b.logf("waiting for %s to start: %s, %.0f s of %.0f (--ready-timeout)", b.target.Base(), shortCause(err), waited.Seconds(), b.spec.ReadyTimeout.Seconds())
	}
}

// notReady is the run's error for a failed ready wait: a timeout names --ready-timeout, the
// one setting that changes it, and a 404 on every probe path is a usage error (the URL is
// wrong: its message says to give the base URL).
func notReady(err error, s *runspec.Spec) error {
	var nr *client.NotReadyError
	var ns *client.NotServedError
	switch {
	case errors.As(err, &ns):
		return runspec.Usagef("--url: %s", s.Redact(err.Error()))
	case errors.As(err, &nr) && nr.Refused:
		return fmt.Errorf("%s (nothing listens there: start the server, or give it longer with --ready-timeout, now %gs)", s.Redact(err.Error()), nr.Timeout.Seconds())
	case errors.As(err, &nr):
		return fmt.Errorf("%s (--ready-timeout, now %gs, waits longer)", s.Redact(err.Error()), nr.Timeout.Seconds())
	}
	return errors.New(s.Redact(err.Error()))
}

// shortCause is the end of an error chain's message: "connection refused" for a whole
// "Get "http://…/health": dial tcp …: connect: connection refused".
func shortCause(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && i+2 < len(msg) {
		return msg[i+2:]
	}
	return msg
}
