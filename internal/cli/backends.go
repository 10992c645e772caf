package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"servebench/client"
	"servebench/client/detect"
	"servebench/client/llamacpp"
	"servebench/client/ollama"
	"servebench/client/openai"
	"servebench/client/sglang"
	"servebench/client/tgi"
	"servebench/client/triton"
	"servebench/record"
	"servebench/tokenizer"
	"servebench/workload"
)

// apiAuto asks servebench to find the API family from the server's endpoints.
const apiAuto = "auto"

// apiNames are the values of --api, in the order the help lists them.
var apiNames = []string{
	openai.APICompletions, openai.APIChat, ollama.APIGenerate, ollama.APIChat,
	tgi.API, llamacpp.API, sglang.API, triton.API, apiAuto,
}

// knownAPI reports whether name is a value of --api.
func knownAPI(name string) bool {
	for _, a := range apiNames {
		if a == name {
			return true
		}
	}
	return false
}

// chatAPI reports whether an API sends chat messages, so the workload is built as chat.
func chatAPI(name string) bool { return name == openai.APIChat || name == ollama.APIChat }

// newBackend returns the backend for api on target t. model is needed by APIs that address
// the model in the URL (Triton); idle is the stream idle timeout (0: none).
func newBackend(t client.Target, api, model string, idle time.Duration) (client.Backend, error) {
	var nb *client.EventBackend // every native backend
	var err error
	switch api {
	case openai.APICompletions, openai.APIChat:
		o, err := openai.New(t, api)
		if err != nil {
			return nil, err
		}
		o.IdleTimeout = idle
		return o, nil
	case ollama.APIGenerate, ollama.APIChat:
		nb, err = ollama.New(t, api)
	case tgi.API:
		nb, err = tgi.New(t)
	case llamacpp.API:
		nb, err = llamacpp.New(t)
	case sglang.API:
		nb, err = sglang.New(t)
	case triton.API:
		nb, err = triton.New(t, model)
	default:
		return nil, usageErr("--api %q: want one of %s", api, strings.Join(apiNames, ", "))
	}
	if err != nil {
		return nil, err
	}
	nb.IdleTimeout = idle
	return nb, nil
}

// resolveAPI replaces --api auto with the family the server's endpoints reveal, and checks
// what an API needs before any model lookup: Triton has no model list, so --model is
// required.
func (b *bench) resolveAPI(ctx context.Context) error {
	cfg := b.cfg
	if cfg.API == apiAuto {
		cfg.API = detect.API(ctx, b.target)
		b.logf("--api auto: the server speaks %s", cfg.API)
	}
	if cfg.API == triton.API && cfg.Model == "" {
		return usageErr("--model is required with --api triton (Triton lists no models), e.g. --model ensemble")
	}
	return nil
}

// promptTokenizer returns the tokenizer prompt lengths are measured with, and its name for
// the records header: the local --tokenizer file when given, else the server's tokenize
// endpoint, else nil (lengths are approximate; Ollama and Triton have no endpoint).
func (b *bench) promptTokenizer(ctx context.Context) (workload.Tokenizer, error) {
	cfg := b.cfg
	if cfg.Tokenizer != "" {
		tk, err := tokenizer.Load(cfg.Tokenizer)
		if err != nil {
			return nil, usageErr("--tokenizer: %v", err)
		}
		b.tokName = "local:" + filepath.Base(cfg.Tokenizer)
		return tk, nil
	}
	tok := workload.TokenizerFunc(func(ctx context.Context, text string) (int, error) {
		return client.Tokenize(ctx, b.target, cfg.Model, text)
	})
	if _, err := tok.Count(ctx, "hello"); errors.Is(err, client.ErrNoTokenizer) {
		b.logf("the server has no tokenize endpoint: prompt lengths are approximate (--tokenizer FILE makes them exact)")
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("tokenize: %s", redactSecret(err.Error(), cfg.APIKey))
	}
	b.tokName = "server:/tokenize"
	return tok, nil
}

// backend returns the run's backend, watched so that a run in which every request failed can
// say why (see allFailed).
func (b *bench) backend() (client.Backend, error) {
	be, err := newBackend(b.target, b.cfg.API, b.cfg.Model, b.cfg.IdleTimeout)
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

// allFailed is the run's error when not one request succeeded: an exit status of 0 with
// nothing measured would let a CI job pass on a misconfigured run (a wrong model name, a
// wrong --api), and the first failure carries the server's own message.
func (b *bench) allFailed() error {
	w := b.watch
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ok || w.first == "" {
		return nil
	}
	return fmt.Errorf("every request failed; the first: %s", redactSecret(w.first, b.cfg.APIKey))
}
