// Package peertest starts the real servers of ../shared/peers for integration tests. A test
// that needs one skips, with a message, when it cannot be set up here; it never fails for that
// reason alone.
package peertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"servebench/launch"
)

// PeersDir finds the shared peers folder: $SERVEBENCH_PEERS, or ../shared/peers beside the
// repository's root.
func PeersDir() (string, error) {
	if d := os.Getenv("SERVEBENCH_PEERS"); d != "" {
		return d, nil
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	d := filepath.Join(root, "..", "shared", "peers")
	if _, err := os.Stat(filepath.Join(d, "llama-server.sh")); err != nil {
		return "", fmt.Errorf("no shared peers folder at %s", d)
	}
	return filepath.Abs(d)
}

var setupOnce struct {
	sync.Once
	err error
}

// setup runs `llama-server.sh setup` once per test process.
func setup(dir string) error {
	setupOnce.Do(func() {
		cmd := exec.Command("sh", filepath.Join(dir, "llama-server.sh"), "setup")
		out, err := cmd.CombinedOutput()
		if err != nil {
			setupOnce.err = fmt.Errorf("llama-server.sh setup: %v: %s", err, out)
		}
	})
	return setupOnce.err
}

// Llama starts llama-server with the named model (tiny.gguf or mini.gguf) and extra
// arguments on a free loopback port, and returns its base URL. The server is stopped when the
// test ends. The test is skipped when the server cannot be set up.
//
// Pass "-t", "1": llama.cpp's worker threads wait for each other at every step, spinning, so
// with -t 2 on a machine whose two cores are shared (the rest of the suite, other work) one
// descheduled thread stalls the step. Measured beside two `yes > /dev/null` loops: 10 native
// requests of 48 tokens took 19.9 s at -t 2 and 1.0 s at -t 1 (25 against 608 output tok/s).
func Llama(t testing.TB, model string, args ...string) string {
	t.Helper()
	dir := llamaDir(t)
	s, err := startLlamaRetry(dir, model, args)
	if err != nil {
		notServing(t, err)
	}
	t.Cleanup(s.stop)
	return s.url
}

// Shared is Llama for a server that outlives the test: one server per model and argument
// list in this test process, started by the first test that asks for it and reused by every
// later one, so a package's tests load each model once. The package's TestMain must call
// StopShared after m.Run. A test that uses it must not depend on the server being fresh (its
// slots and prompt cache hold earlier tests' prompts, its /metrics counters their requests).
// The test holds the server to itself until it ends: a parallel test that asks for a server
// another test holds waits for it, so no test's figures hold another's requests while tests
// of different servers, and every other parallel test, run beside it. A test must ask for one
// shared server at most (two could wait on each other).
func Shared(t testing.TB, model string, args ...string) string {
	t.Helper()
	dir := llamaDir(t)
	key := strings.Join(append([]string{model}, args...), " ")
	shared.mu.Lock()
	s, ok := shared.servers[key]
	if !ok {
		if shared.servers == nil {
			shared.servers = map[string]*llamaServer{}
		}
		s = &llamaServer{starting: make(chan struct{})}
		shared.servers[key] = s
	}
	shared.mu.Unlock()
	if !ok {
		started, err := startLlamaRetry(dir, model, args)
		if err != nil {
			s.err = err
		} else {
			s.url, s.stop = started.url, started.stop
		}
		close(s.starting)
	}
	<-s.starting
	if s.err != nil {
		notServing(t, s.err)
	}
	s.held.Lock()
	t.Cleanup(s.held.Unlock)
	return s.url
}

// shared holds the servers of Shared, by model and arguments.
var shared struct {
	mu      sync.Mutex
	servers map[string]*llamaServer
}

// StopShared stops every server Shared started in this test process.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for key, s := range shared.servers {
		if s.stop != nil {
			s.stop()
		}
		delete(shared.servers, key)
	}
}

// llamaDir is the shared peers folder with llama-server set up, or skips t.
func llamaDir(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("llama.cpp server: skipped in -short mode")
	}
	dir, err := PeersDir()
	if err != nil {
		t.Skipf("llama.cpp server not available: %v", err)
	}
	if err := setup(dir); err != nil {
		t.Skipf("llama.cpp server not available here: %v", err)
	}
	return dir
}

// errNoStart is a llama-server that could not even be started: the test skips.
var errNoStart = errors.New("llama.cpp server did not start")

// notServing fails t for a server that was set up but does not serve, and skips it for
// one that could not be started.
func notServing(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errNoStart) {
		t.Skip(err)
	}
	t.Fatalf("llama.cpp server set up but not serving: %v", err)
}

// llamaServer is a started llama-server: its URL and how to stop it (or why it did not start).
type llamaServer struct {
	url  string
	stop func()
	err  error
	// Shared's: closed once the server started or failed to; held by the test using it
	starting chan struct{}
	held     sync.Mutex
}

// startLlamaRetry starts llama-server, up to three times. The port is free when chosen but
// not reserved: another test's server may take it before llama-server binds it (llama-server
// then exits, and that server answers /health). So the server must be ours — llama's /props
// answers — or it is started again on another port.
func startLlamaRetry(dir, model string, args []string) (*llamaServer, error) {
	var last error
	for range 3 {
		s, err := startLlama(dir, model, args)
		if err == nil || errors.Is(err, errNoStart) {
			return s, err
		}
		last = err
	}
	return nil, last
}

// startLlama starts llama-server on a free port and waits until it serves its own /props.
func startLlama(dir, model string, args []string) (*llamaServer, error) {
	// launch's pick, below the ephemeral range: no parallel test's listener or connection
	// takes the port before the server binds it
	port, err := launch.FreePort()
	if err != nil {
		return nil, fmt.Errorf("free port: %w", err)
	}
	full := append([]string{filepath.Join(dir, "llama-server.sh"), "run", filepath.Join(dir, "models", model),
		"--host", "127.0.0.1", "--port", strconv.Itoa(port)}, args...)
	cmd := exec.Command("sh", full...)
	cmd.SysProcAttr = dieWithParent()
	logf, err := os.CreateTemp("", "servebench-llama-*.log")
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		os.Remove(logf.Name())
		return nil, fmt.Errorf("%w: %v", errNoStart, err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		os.Remove(logf.Name())
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := waitHealth(url, 60*time.Second); err != nil {
		b, _ := os.ReadFile(logf.Name())
		stop()
		return nil, fmt.Errorf("not healthy: %w\n%s", err, b)
	}
	if !isLlama(url) {
		stop()
		return nil, fmt.Errorf("port %d answered /health but not llama.cpp's /props: another server took it", port)
	}
	return &llamaServer{url: url, stop: stop}, nil
}

// isLlama says whether the server at url is llama.cpp: its /props has the generation settings.
func isLlama(url string) bool {
	resp, err := http.Get(url + "/props")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode == http.StatusOK && strings.Contains(string(b), "default_generation_settings")
}

func waitHealth(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// LlamaCommand is the command line that starts llama-server with the named model on
// loopback, {port} for its port (launch's placeholder), for a test in which servebench
// starts the server itself (sweep --server-cmd). The test is skipped when the server cannot
// be set up.
func LlamaCommand(t testing.TB, model string) string {
	t.Helper()
	dir := llamaDir(t)
	return fmt.Sprintf("sh %s run %s --host 127.0.0.1 --port {port}", filepath.Join(dir, "llama-server.sh"), filepath.Join(dir, "models", model))
}
