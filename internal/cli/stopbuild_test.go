package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"servebench/sim"
)

// TestStopWhileBuildingARunsPrompts: a stop that comes while a later run's prompts are being
// built (its tokenizer call in flight) ends the file like a stop between runs: exit 0, the
// runs before it stand. A proxy in front of the simulator holds /tokenize once the runs
// built up front are done, and the stop comes while one is held (it used to exit 1 with
// "build the prompts of run 263: tokenize: … context canceled").
func TestStopWhileBuildingARunsPrompts(t *testing.T) {
	_, simURL := startSimServer(t, func(c *sim.Config) { c.TTFT, c.ITL = time.Millisecond, time.Millisecond })
	target, err := url.Parse(simURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var hold atomic.Bool
	held := make(chan struct{}, 1)
	release := make(chan struct{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hold.Load() && strings.HasSuffix(r.URL.Path, "/tokenize") {
			select {
			case held <- struct{}{}:
			default:
			}
			select { // held until the client gives up on it (or the test ends)
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	defer close(release)
	p := filepath.Join(t.TempDir(), "r.jsonl")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan int, 1)
	var errs bytes.Buffer
	go func() {
		done <- Main(ctx, []string{"run", "-q", "--url", front.URL, "--repeat", "100000000", "--requests", "3",
			"--warmup", "1", "--concurrency", "1", "--input-tokens", "8", "--output-tokens", "2", "-o", p},
			strings.NewReader(""), &bytes.Buffer{}, &errs)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !hasRecordOfRun(p, 1024/4) { // past the runs whose prompts were built up front
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("no record of run %d within 60s: %s", 1024/4, errs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	hold.Store(true)
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		stop()
		t.Fatalf("no tokenizer call held within 30s: %s", errs.String())
	}
	stop()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d, want 0 (stopped between runs): %s", code, errs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit within 30s of the stop")
	}
	if _, recs := readRecords(t, p); len(recs) == 0 {
		t.Fatal("no records kept")
	}
}
