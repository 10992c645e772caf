package report

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"servebench/metrics"
	"servebench/record"
)

const chromium = "/usr/bin/chromium"

// synthRun builds a deterministic run of n requests over about 8 s: TTFT around ttftMS,
// 20-60 events 10-30 ms apart carrying 1-3 tokens, a few failures, and conditions.
func synthRun(seed uint64, n int, ttftMS float64, label string) Run {
	return synthRunWith(seed, n, ttftMS, label, nil)
}

// synthRunWith is synthRun with its header changed by mod before any record is added.
func synthRunWith(seed uint64, n int, ttftMS float64, label string, mod func(*record.Header)) Run {
	rng := rand.New(rand.NewPCG(seed, 7))
	h := header(true)
	h.Conditions = []record.Condition{{Key: "gpu", Value: "sim", Source: "detected"}, {Key: "model.quant", Value: label, Source: "declared"}}
	if mod != nil {
		mod(h)
	}
	var acc metrics.Accumulator
	acc.SetHeader(h)
	var se Series
	for i := range n {
		sent := int64(1e9) + int64(i)*8e9/int64(n) + rng.Int64N(5e6)
		r := record.Record{ID: i, Phase: record.PhaseMeasure, Scheduled: sent - 2e6, Dispatched: sent - 1e6, Sent: sent}
		t := sent + int64((ttftMS+rng.NormFloat64()*ttftMS/4)*1e6)
		for range 20 + rng.IntN(40) {
			k := int32(1 + rng.IntN(3))
			r.Events = append(r.Events, record.Event{T: t, N: k})
			r.OutputTokens += int(k)
			t += int64((10e6 + rng.Float64()*20e6) * ttftMS / 80)
		}
		r.FirstEvent, r.Done, r.OutputTokensSource = r.Events[0].T, t, record.SourceServer
		if i%97 == 5 {
			r.ErrorClass, r.Status = record.ErrHTTP5xx, 503
		}
		acc.Add(&r)
		se.Add(&r)
	}
	return Run{Label: label, Header: h, Summary: acc.Summary(), Series: &se}
}

// artifacts is where screenshots go: $SERVEBENCH_ARTIFACTS, or the test's temporary directory.
func artifacts(t *testing.T) string {
	if d := os.Getenv("SERVEBENCH_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestHTMLInBrowser opens the one-run and the two-run reports in headless Chromium. Every
// host name resolves to a local server that serves the report and records any other request,
// so a request to anywhere fails the test; any console message (a CSP violation, a parse
// error) fails it too; every chart must be drawn in the rendered DOM; a screenshot is saved.
func TestHTMLInBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("skipping the browser test: %s not found (apt-get install chromium)", chromium)
	}
	base := synthRun(1, 400, 80, "base")
	cand := synthRun(2, 300, 110, "candidate")
	tel := synthRunWith(3, 400, 80, "telemetry", synthTelemetry)
	for _, c := range []struct {
		name string
		runs []Run
	}{{"single", []Run{base}}, {"compare", []Run{base, cand}}, {"telemetry", []Run{tel}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var page bytes.Buffer
			if err := HTMLRuns(&page, c.runs); err != nil {
				t.Fatal(err)
			}
			browse(t, c.name, page.Bytes())
		})
	}
}

func browse(t *testing.T, name string, page []byte) {
	dom, shot := openInChromium(t, name, page)
	checkCharts(t, dom)
	if name == "telemetry" {
		checkPanels(t, dom)
	} else if strings.Contains(dom, `data-panel=`) {
		t.Error("server panels drawn for records without telemetry")
	}
	checkShot(t, shot)
}

// checkShot checks that a screenshot was saved, and names it.
func checkShot(t *testing.T, shot string) {
	t.Helper()
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
	t.Logf("screenshot: %s", shot)
}

// openInChromium serves page on a local server, opens it in headless Chromium, fails the test
// on any other request the page makes or any console message, and returns the rendered DOM
// and the screenshot's path.
func openInChromium(t *testing.T, name string, page []byte) (string, string) {
	var mu sync.Mutex
	var others []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/report.html" && r.Host == srv0Host(r) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page)
			return
		}
		// Chromium's own background fetches (component updater, network time) carry no
		// Sec-Fetch-* headers; every request made by a web page does.
		if r.Header.Get("Sec-Fetch-Dest") == "" && r.Header.Get("Referer") == "" {
			t.Logf("ignored a request of the browser itself: %s%s", r.Host, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		others = append(others, r.Host+r.URL.String())
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	url := srv.URL + "/report.html"
	shot := filepath.Join(artifacts(t), "report-"+name+".png")
	dom, logs := runChromium(t, srv.Listener.Addr().String(), "--dump-dom", "--screenshot="+shot, url)
	logs2 := ""
	if name == "single" { // the dark colour scheme, for a person to look at
		dark := filepath.Join(filepath.Dir(shot), "report-single-dark.png")
		_, l := runChromium(t, srv.Listener.Addr().String(), "--force-dark-mode", "--screenshot="+dark, url)
		logs2 += l
	}
	mu.Lock()
	defer mu.Unlock()
	if len(others) > 0 {
		t.Errorf("the page made network requests: %v", others)
	}
	for _, l := range strings.Split(logs+logs2, "\n") {
		if strings.Contains(l, ":CONSOLE") {
			t.Errorf("console message: %s", l)
		}
	}
	return dom, shot
}

// srv0Host accepts the report only under its own address: a mapped host name is an outside request.
func srv0Host(r *http.Request) string {
	if strings.HasPrefix(r.Host, "127.0.0.1:") {
		return r.Host
	}
	return ""
}

var (
	svgRE   = regexp.MustCompile(`(?s)<svg class="chart" id="([^"]+)".*?</svg>`)
	dataNRE = regexp.MustCompile(`data-n="(\d+)"`)
)

// checkCharts checks that the rendered DOM has all seven charts, each with a drawn mark.
func checkCharts(t *testing.T, dom string) {
	t.Helper()
	want := []string{"ttft-cdf", "ttft-hist", "itl-cdf", "itl-hist", "e2e-scatter", "tokens-time", "inflight-time"}
	charts := svgRE.FindAllStringSubmatch(dom, -1)
	if len(charts) != len(want) {
		t.Fatalf("%d charts in the rendered page, want %d (dom %d bytes)", len(charts), len(want), len(dom))
	}
	for i, c := range charts {
		if c[1] != want[i] {
			t.Errorf("chart %d is %s, want %s", i, c[1], want[i])
		}
		points := 0
		for _, m := range dataNRE.FindAllStringSubmatch(c[0], -1) {
			n, _ := strconv.Atoi(m[1])
			points += n
		}
		if points == 0 || !strings.Contains(c[0], ` d="M`) && !strings.Contains(c[0], "<circle") {
			t.Errorf("chart %s has no data points drawn", c[1])
		}
	}
	for _, s := range []string{`id="summary"`, `id="latency"`, `id="conditions"`, "SIMULATED", `class="warnings"`} {
		if !strings.Contains(dom, s) {
			t.Errorf("rendered page lacks %s", s)
		}
	}
}

var panelRE = regexp.MustCompile(`(?s)<g class="panel" data-panel="([^"]+)".*?</g>`)

// checkPanels checks that the E2E scatter carries the server's three panels below it, drawn.
func checkPanels(t *testing.T, dom string) {
	t.Helper()
	var got []string
	for _, m := range panelRE.FindAllStringSubmatch(dom, -1) {
		got = append(got, m[1])
		if n := dataNRE.FindStringSubmatch(m[0]); n == nil || n[1] == "0" {
			t.Errorf("panel %s has no points drawn", m[1])
		}
	}
	if strings.Join(got, " ") != "server-queue server-kv gpu-power" {
		t.Errorf("panels %v, want server-queue server-kv gpu-power", got)
	}
	if !strings.Contains(dom, `<figure class="wide">`) {
		t.Error("the timeline does not span the page")
	}
	if !strings.Contains(dom, `<h2 id="server">`) || !strings.Contains(dom, `<table class="server">`) {
		t.Error("the rendered page lacks the server section's table")
	}
}

// synthTelemetry gives a header a server's samples every 250 ms from 0.5 s to 11 s (the
// requests are sent from 1 s to 9 s and done by 10.2 s): a queue building up in the middle, the KV cache filling
// with it, and one GPU's power; and nvidia-smi's readings beside them.
func synthTelemetry(h *record.Header) {
	v := func(x float64) *float64 { return &x }
	for k := 0; k <= 42; k++ {
		t := 0.5 + float64(k)/4
		load := math.Max(0, 1-math.Abs(t-5)/3) // 0 at the edges, 1 at 5 s
		at := int64(t * 1e9)
		h.Telemetry = append(h.Telemetry, record.Telemetry{V: 1, T: at, Source: "http://127.0.0.1:8000/metrics", OK: true, Series: []record.Series{
			{Name: "vllm:num_requests_waiting", Type: record.TypeGauge, Value: v(math.Round(12 * load))},
			{Name: "vllm:num_requests_running", Type: record.TypeGauge, Value: v(math.Round(4 + 12*load))},
			{Name: "vllm:kv_cache_usage_perc", Type: record.TypeGauge, Value: v(0.1 + 0.85*load)},
		}}, record.Telemetry{V: 1, T: at + 1e6, Source: record.GPUSource, OK: true, Series: []record.Series{
			{Name: record.GPUPower, Labels: map[string]string{"gpu": "0"}, Type: record.TypeGauge, Value: v(120 + 250*load)},
			{Name: record.GPUSMClock, Labels: map[string]string{"gpu": "0"}, Type: record.TypeGauge, Value: v(1980e6)},
		}})
	}
}

// runChromium runs headless Chromium on url with every host name mapped to addr and returns
// its standard output and its log (console messages are logged as "INFO:CONSOLE").
func runChromium(t *testing.T, addr string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0", "--window-size=1280,3400",
		fmt.Sprintf("--host-resolver-rules=MAP * %s", addr)}
	cmd := exec.CommandContext(ctx, chromium, append(base, args...)...)
	// Files, not buffers: Chromium's helper processes inherit the descriptors and may outlive
	// it, and Wait would wait for them to close a pipe.
	dir := t.TempDir()
	out, err1 := os.Create(filepath.Join(dir, "stdout"))
	errf, err2 := os.Create(filepath.Join(dir, "stderr"))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	defer out.Close()
	defer errf.Close()
	cmd.Stdout, cmd.Stderr = out, errf
	err := cmd.Run()
	ob, _ := os.ReadFile(out.Name())
	eb, _ := os.ReadFile(errf.Name())
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, eb)
	}
	return string(ob), string(eb)
}

// TestServerSectionHTMLAndMarkdown: the text report's server lines are in the HTML and
// Markdown reports too, for records with telemetry only.
func TestServerSectionHTMLAndMarkdown(t *testing.T) {
	tel := synthRunWith(3, 400, 80, "telemetry", synthTelemetry)
	base := synthRun(1, 400, 80, "base")
	rows := serverRows(tel.Summary)
	if len(rows) < 3 {
		t.Fatalf("server rows %+v: want scrapes, queue, kv cache at least", rows)
	}
	for _, r := range []struct {
		run  Run
		want bool
	}{{tel, true}, {base, false}} {
		var page, md bytes.Buffer
		if err := HTMLRuns(&page, []Run{r.run}); err != nil {
			t.Fatal(err)
		}
		if err := Markdown(&md, r.run.Header, r.run.Summary); err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]string{"html": page.String(), "markdown": md.String()} {
			if got := strings.Contains(out, "Server during the window"); got != r.want {
				t.Errorf("%s of %s: server section %v, want %v", name, r.run.Label, got, r.want)
			}
			if !r.want {
				continue
			}
			for _, row := range rows {
				if text := html.EscapeString(row.Text); !strings.Contains(out, text) && !strings.Contains(out, row.Text) {
					t.Errorf("%s lacks the server line %q", name, row.Text)
				}
			}
		}
	}
}
