package openai

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"servebench/client"
	"servebench/client/clienttest"
	"servebench/record"
)

const peers = "../../../shared/peers/" // /work/shared/peers beside the repository

// liveServer starts llama.cpp's llama-server on a free port (see peers/README.md) and returns
// a Target for it. It skips when the server cannot be set up here (exit 3) or in -short mode.
func liveServer(t *testing.T) client.Target {
	t.Helper()
	if testing.Short() {
		t.Skip("real server: skipped in -short mode")
	}
	script := peers + "llama-server.sh"
	if out, err := exec.Command(script, "setup").CombinedOutput(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			t.Skipf("llama-server not available here: %s", strings.TrimSpace(string(out)))
		}
		t.Skipf("llama-server setup: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(script, "run", peers+"models/tiny.gguf",
		"--host", "127.0.0.1", "--port", port, "-t", "1", "-np", "2", "-c", "2048")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	tg := client.Target{BaseURL: "http://127.0.0.1:" + port, HTTP: client.NewHTTPClient(2, false)}
	if err := client.WaitReady(context.Background(), tg, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	return tg
}

// TestLiveLlamaCpp runs both APIs and the helpers against a real llama.cpp server.
func TestLiveLlamaCpp(t *testing.T) {
	tg := liveServer(t)
	ctx := context.Background()
	fresh := tg
	fresh.HTTP = client.NewHTTPClient(2, false) // not the pool WaitReady used
	for _, api := range []string{APICompletions, APIChat} {
		b, _ := New(fresh, api)
		b.IdleTimeout = 10 * time.Second
		req := request()
		req.OutputTokens, req.FixedOutput = 8, true
		rec := &recorder{}
		if err := b.Do(ctx, req, rec); err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		log := strings.Join(rec.calls, " ")
		contents := strings.Count(log, "content 0")
		// llama.cpp reports its prefix-cache hits as usage.prompt_tokens_details.cached_tokens
		// (0 included: reported, not unknown).
		// llama.cpp b11669 closes the connection after every streamed answer (curl sees the
		// same), so each request dials: connect is reported every time.
		if !strings.HasPrefix(log, "dispatch connect connected headers 200 event choice") ||
			!strings.HasSuffix(log, "event done") || contents < 1 || contents > 8 ||
			!strings.Contains(log, "/8 usage.cached_tokens=") || !strings.Contains(log, "timings.predicted_n=8") {
			t.Errorf("%s: calls %q", api, rec.events())
		}
	}

	b, _ := New(tg, APIChat)
	req := request()
	req.Sampling.ExtraBody = map[string]any{"messages": "not a list"}
	err := b.Do(ctx, req, &recorder{})
	if clienttest.Class(t, err) != record.ErrHTTP4xx || !strings.Contains(err.Error(), "messages") {
		t.Errorf("bad request: %v", err)
	}

	if n, err := client.Tokenize(ctx, tg, "", "hello there"); err != nil || n < 1 {
		t.Errorf("Tokenize = %d, %v", n, err)
	}
	if ids, err := client.ListModels(ctx, tg); err != nil || len(ids) != 1 {
		t.Errorf("ListModels = %q, %v", ids, err)
	}
}
