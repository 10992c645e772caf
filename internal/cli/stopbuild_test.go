package cli

import (
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
	t.Parallel()
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
	h := startHugeRepeat(t, front.URL, p)
	defer h.stop()
	h.waitForRun(t, upfrontRuns) // past the runs whose prompts were built up front
	stop, done, errs := h.stop, h.done, &h.errs
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
