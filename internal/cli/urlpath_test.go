package cli

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// urlRun runs a short run against url and returns its exit code, stderr and records path.
func urlRun(t *testing.T, url string, args ...string) (int, string, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errs := runMain(t, append([]string{"run", "--url", url, "-o", p, "--requests", "4", "--warmup", "0",
		"--input-tokens", "16", "--output-tokens", "8"}, args...)...)
	return code, errs, p
}

// headerAndScrapes reads the records' target URL and the sources of its successful scrapes.
func headerAndScrapes(t *testing.T, path string) (string, map[string]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var target string
	scraped := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			Header *struct {
				Target struct{ URL string } `json:"target"`
			} `json:"servebench_header"`
			Tel *struct {
				Source string `json:"source"`
				OK     bool   `json:"ok"`
			} `json:"servebench_telemetry"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Header != nil {
			target = l.Header.Target.URL
		}
		if l.Tel != nil && l.Tel.OK {
			scraped[l.Tel.Source] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return target, scraped
}

// TestURLWithAPIPath: a --url that ends in an API path is benchmarked at its base, which the
// run says in one line, records in its header and scrapes /metrics under; a reverse proxy's
// own path prefix is kept.
func TestURLWithAPIPath(t *testing.T) {
	t.Parallel()
	base := startSim(t, nil)
	su, _ := url.Parse(base)
	proxy := httptest.NewServer(http.StripPrefix("/llama", httputil.NewSingleHostReverseProxy(su)))
	t.Cleanup(proxy.Close)
	for _, c := range []struct{ url, base, dropped string }{
		{base + "/v1", base, "/v1"},
		{base + "/v1/chat/completions/", base, "/v1/chat/completions"},
		{proxy.URL + "/llama/v1/completions", proxy.URL + "/llama", "/v1/completions"},
		{proxy.URL + "/llama/", proxy.URL + "/llama", ""},
	} {
		code, errs, p := urlRun(t, c.url)
		if code != 0 {
			t.Fatalf("--url %s: exit %d: %s", c.url, code, errs)
		}
		line := "--url: benchmarking the server at " + c.base + ": servebench adds each endpoint's path itself, so the URL's " + c.dropped + " is left out"
		if got := strings.Contains(errs, line); got != (c.dropped != "") {
			t.Errorf("--url %s: line %q on stderr %v, want %v:\n%s", c.url, line, got, c.dropped != "", errs)
		}
		if c.dropped == "/v1/chat/completions" && !strings.Contains(errs, "(--api openai-chat is the API that sends there)") {
			t.Errorf("--url %s: the line does not name --api openai-chat:\n%s", c.url, errs)
		}
		target, scraped := headerAndScrapes(t, p)
		if target != c.base {
			t.Errorf("--url %s: header's target URL %q, want the base %q", c.url, target, c.base)
		}
		if !scraped[c.base+"/metrics"] {
			t.Errorf("--url %s: no successful scrape of %s/metrics (scraped %v):\n%s", c.url, c.base, scraped, errs)
		}
	}
}

// TestURLNotServed: a URL at which every readiness path answers 404 fails at its first probe
// with the base-URL hint and a usage error's exit 2, not after the ready timeout (a timeout's
// message and exit are different, so they show which ended it).
func TestURLNotServed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	code, errs, _ := urlRun(t, srv.URL+"/v1/completions", "--ready-timeout", "30s")
	if code != 2 {
		t.Errorf("exit %d, want 2: %s", code, errs)
	}
	for _, want := range []string{"no inference server at " + srv.URL + ": GET /health, /v1/models and /v2/health/ready all answered HTTP 404",
		"give the server's base URL"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "not ready after") {
		t.Errorf("waited for its ready timeout:\n%s", errs)
	}
	// env reads --url as run does
	code, _, errs = runMain(t, "env", "--url", srv.URL+"/v1/completions", "--ready-timeout", "30s")
	if code != 2 || !strings.Contains(errs, "the URL's /v1/completions is left out") || !strings.Contains(errs, "give the server's base URL") {
		t.Errorf("env: exit %d, want 2 with the left-out path and the base-URL hint:\n%s", code, errs)
	}
}

// TestURLRefusedNamesReadyTimeout: a closed port says it waits for the server to start and
// names --ready-timeout, in the progress line and in the final error (exit 1). 5 s is the
// shortest ready timeout that prints progress lines (bench.waitingMin).
func TestURLRefusedNamesReadyTimeout(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	code, errs, _ := urlRun(t, u, "--ready-timeout", "5s")
	if code != 1 {
		t.Errorf("exit %d, want 1: %s", code, errs)
	}
	for _, want := range []string{"waiting for " + u + " to start: connection refused, 0 s of 5 (--ready-timeout)",
		"server at " + u + " not ready after 5s:", "(nothing listens there: start the server, or give it longer with --ready-timeout, now 5s)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}
