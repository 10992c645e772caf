// Package peertest starts the real servers of ../shared/peers for integration tests. A test
// that needs one skips, with a message, when it cannot be set up here; it never fails for that
// reason alone.
package peertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
	// The port is free when chosen but not reserved: another test's server may take it before
	// llama-server binds it (llama-server then exits, and that server answers /health). So
	// the server must be ours — llama's /props answers — or it is started again on another port.
	var last error
	for range 3 {
		url, err := startLlama(t, dir, model, args)
		if err == nil {
			return url
		}
		last = err
	}
	t.Fatalf("llama.cpp server set up but not serving: %v", last)
	return ""
}

// startLlama starts llama-server on a free port and waits until it serves its own /props.
func startLlama(t testing.TB, dir, model string, args []string) (string, error) {
	port, err := freePort()
	if err != nil {
		return "", fmt.Errorf("free port: %w", err)
	}
	full := append([]string{filepath.Join(dir, "llama-server.sh"), "run", filepath.Join(dir, "models", model),
		"--host", "127.0.0.1", "--port", strconv.Itoa(port)}, args...)
	cmd := exec.Command("sh", full...)
	logf, _ := os.CreateTemp(t.TempDir(), "llama-*.log")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Skipf("llama.cpp server did not start: %v", err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := waitHealth(url, 60*time.Second); err != nil {
		stop()
		b, _ := os.ReadFile(logf.Name())
		return "", fmt.Errorf("not healthy: %w\n%s", err, b)
	}
	if !isLlama(url) {
		stop()
		return "", fmt.Errorf("port %d answered /health but not llama.cpp's /props: another server took it", port)
	}
	t.Cleanup(stop)
	return url, nil
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

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
