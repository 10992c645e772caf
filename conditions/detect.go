package conditions

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"servebench/client"
)

// ProbeTimeout bounds each discovery request. Discovery must never slow a run down much, and
// a server that does not answer a path in 2 s does not have it in any useful sense.
const ProbeTimeout = 2 * time.Second

// probePaths are the GET endpoints that tell the server families apart and describe them.
// They are asked all at once; a 404 or a timeout is an answer too (absence is fine).
var probePaths = []string{
	"/version",         // vLLM, the simulator
	"/v1/models",       // every OpenAI-compatible server: model id, max_model_len, llama.cpp meta
	"/metrics",         // vLLM info gauges, llama.cpp family hint
	"/get_server_info", // SGLang
	"/server_info",     // SGLang (newer name)
	"/get_model_info",  // SGLang
	"/info",            // TGI
	"/props",           // llama.cpp
	"/slots",           // llama.cpp
	"/api/version",     // Ollama
	"/api/ps",          // Ollama: loaded models
}

// answer is one probe's result: ok only for a 200 whose body was read.
type answer struct {
	body []byte
	ok   bool
}

// answers maps a probe path to what the server said.
type answers map[string]answer

func (a answers) json(path string, v any) bool {
	r := a[path]
	return r.ok && json.Unmarshal(r.body, v) == nil
}

// Detect asks the server at t what it is, cheaply and tolerantly: every family's discovery
// endpoints in parallel with ProbeTimeout each, then each family's parser on the answers. GPU
// facts come from nvidia-smi when the server runs on this machine (a loopback URL) and the
// target is not the simulator. A server that answers nothing gives an empty set, never an error.
func Detect(ctx context.Context, t client.Target) Set {
	a := fetch(ctx, t, probePaths)
	var s Set
	for _, fam := range families {
		for _, c := range fam(a) {
			s.Put(c)
		}
	}
	if s.Value(ServerFamily) == "ollama" {
		for _, c := range ollamaShow(ctx, t, s.Value(Model)) {
			s.Put(c)
		}
	}
	if s.Value(ServerFamily) != SimFamily && IsLoopback(t.Base()) {
		for _, c := range GPU(ctx) {
			s.Put(c)
		}
	}
	return s
}

// fetch GETs every path concurrently.
func fetch(ctx context.Context, t client.Target, paths []string) answers {
	out := make(answers, len(paths))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Go(func() {
			body, ok := get(ctx, t, http.MethodGet, p, nil)
			mu.Lock()
			out[p] = answer{body: body, ok: ok}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// get sends one probe with ProbeTimeout and returns a 2xx answer's body (at most 4 MiB).
func get(ctx context.Context, t client.Target, method, path string, body []byte) ([]byte, bool) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := t.NewRequest(ctx, method, path, rd)
	if err != nil {
		return nil, false
	}
	resp, err := t.Client().Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return b, err == nil && resp.StatusCode/100 == 2
}

// IsLoopback reports whether the URL's host is this machine (localhost or a loopback IP): only
// then do this machine's GPUs describe the server.
func IsLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
