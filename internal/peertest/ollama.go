package peertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"servebench/launch"
)

// OllamaBin finds a built Ollama: $SERVEBENCH_OLLAMA, or ~/.cache/servebench-peers/ollama/bin/
// ollama. The tests never build it (scripts/build-ollama does, in 5 to 10 minutes on 2 cores),
// so a test that needs it skips where it is not built.
func OllamaBin() (string, error) {
	bin := os.Getenv("SERVEBENCH_OLLAMA")
	if bin == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		bin = filepath.Join(cache, "servebench-peers", "ollama", "bin", "ollama")
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("no ollama binary at %s (set SERVEBENCH_OLLAMA, or build it with scripts/build-ollama)", bin)
	}
	return bin, nil
}

// Ollama starts `ollama serve` on a free loopback port with its models in a temporary folder,
// creates each model of models (name → Modelfile text; "{{peers}}" in it is the shared peers
// folder, so `FROM {{peers}}/models/mini.gguf` names the test model) and returns the base URL.
// The server is stopped when the test ends. The test is skipped when Ollama is not built here.
func Ollama(t testing.TB, models map[string]string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("ollama server: skipped in -short mode")
	}
	bin, err := OllamaBin()
	if err != nil {
		t.Skipf("ollama server not available: %v", err)
	}
	dir, err := PeersDir()
	if err != nil {
		t.Skipf("ollama server not available: %v", err)
	}
	port, err := launch.FreePort()
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	tmp := t.TempDir()
	// its own home and model store: nothing of the machine's Ollama is read or written
	// (and up to three models loaded at once, whatever the machine's memory says)
	env := append(os.Environ(), "OLLAMA_HOST="+host, "OLLAMA_MODELS="+filepath.Join(tmp, "models"), "HOME="+tmp,
		"OLLAMA_MAX_LOADED_MODELS=3")
	logf, _ := os.CreateTemp(tmp, "ollama-*.log")
	cmd := exec.Command(bin, "serve")
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logf, logf
	if err := cmd.Start(); err != nil {
		t.Skipf("ollama server did not start: %v", err)
	}
	t.Cleanup(func() { stopOllama(cmd) })
	url := "http://" + host
	if err := waitOllama(url, 60*time.Second); err != nil {
		b, _ := os.ReadFile(logf.Name())
		t.Fatalf("ollama server built but not answering: %v\n%s", err, b)
	}
	for name, modelfile := range models {
		createOllamaModel(t, bin, env, tmp, name, strings.ReplaceAll(modelfile, "{{peers}}", dir))
	}
	return url
}

// stopOllama interrupts `ollama serve`, which stops the runner processes it started (one per
// loaded model), and kills it after 10 s. A plain kill would leave the runners behind.
func stopOllama(cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// createOllamaModel runs `ollama create name -f Modelfile` against the test's server.
func createOllamaModel(t testing.TB, bin string, env []string, tmp, name, modelfile string) {
	t.Helper()
	mf := filepath.Join(tmp, name+".Modelfile")
	if err := os.WriteFile(mf, []byte(modelfile), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "create", name, "-f", mf)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ollama create %s: %v\n%s", name, err, out)
	}
}

// waitOllama waits for GET /api/version to answer 200 (Ollama has no /health).
func waitOllama(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/version", nil)
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
