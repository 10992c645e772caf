package telemetry

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"servebench/record"
)

const vllmBody = `# HELP vllm:num_requests_waiting Number of requests waiting.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="m"} 3
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{model_name="m"} 7
# TYPE vllm:num_preemptions_created gauge
vllm:num_preemptions_created{model_name="m"} 1.7e9
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{model_name="m",le="0.1"} 1
vllm:time_to_first_token_seconds_bucket{model_name="m",le="0.5"} 4
vllm:time_to_first_token_seconds_bucket{model_name="m",le="+Inf"} 5
vllm:time_to_first_token_seconds_sum{model_name="m"} 1.5
vllm:time_to_first_token_seconds_count{model_name="m"} 5
# TYPE vllm:request_prompt_tokens histogram
vllm:request_prompt_tokens_bucket{le="+Inf"} 5
vllm:request_prompt_tokens_sum 100
vllm:request_prompt_tokens_count 5
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12
`

func scrapeOnce(t *testing.T, body string, f *Filter, lim limits) ([]record.Series, int, int, error) {
	t.Helper()
	var out bytes.Buffer
	_, _, cut, err := prefilter(strings.NewReader(body), f, lim, &out)
	if err != nil {
		return nil, cut, 0, err
	}
	s, nf, err := parse(out.Bytes())
	return s, cut, nf, err
}

func TestDefaultFilterKeepsServingFamilies(t *testing.T) {
	series, cut, _, err := scrapeOnce(t, vllmBody, DefaultFilter(), limits{body: 1 << 20, series: 100})
	if err != nil || cut != 0 {
		t.Fatalf("err %v cut %d", err, cut)
	}
	var names []string
	for _, s := range series {
		names = append(names, s.Name+":"+s.Type)
	}
	want := "vllm:num_preemptions_total:counter vllm:num_requests_waiting:gauge vllm:time_to_first_token_seconds:histogram"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("kept %s\nwant %s", got, want)
	}
	h := series[2]
	if len(h.Buckets) != 2 || h.Buckets[1] != [2]float64{0.5, 4} || *h.Count != 5 || *h.Sum != 1.5 || h.Labels["model_name"] != "m" {
		t.Errorf("histogram %+v", h)
	}
	all, _, _, _ := scrapeOnce(t, vllmBody, &Filter{All: true}, limits{body: 1 << 20, series: 100})
	if len(all) != 6 {
		t.Errorf("--scrape-all kept %d families, want 6", len(all))
	}
}

func TestSeriesCapAndNonFinite(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "vllm:num_requests_waiting{i=\"%d\"} %d\n", i, i)
	}
	b.WriteString("vllm:num_requests_running NaN\n")
	series, cut, _, err := scrapeOnce(t, b.String(), DefaultFilter(), limits{body: 1 << 20, series: 100})
	if err != nil || len(series) != 100 || cut != 901 {
		t.Fatalf("kept %d, cut %d, err %v; want 100 kept and 901 cut", len(series), cut, err)
	}
	series, _, nf, err := scrapeOnce(t, "vllm:num_requests_running NaN\nvllm:num_requests_waiting 2\n", DefaultFilter(), limits{body: 1 << 20, series: 100})
	if err != nil || len(series) != 1 || nf != 1 {
		t.Fatalf("NaN: kept %d, nonfinite %d, err %v", len(series), nf, err)
	}
	if _, _, _, err := scrapeOnce(t, strings.Repeat("x", 2000)+"\n", nil, limits{body: 1000, series: 100}); err == nil || !strings.Contains(err.Error(), "body over 1000 bytes") {
		t.Fatalf("over the byte cap: %v", err)
	}
}

// hangFor is how long hostile's /hang keeps a scrape waiting for its answer.
const hangFor = 10 * time.Second

// hostileMany is how many series hostile's /many serves: five times the cap
// TestHostileEndpointsAreCountedNotFatal sets (2,000). At 100,000 against a cap of 20,000,
// a scrape under -race on a busy machine (load 8) outlasted its 1 s timeout every time and the
// test failed; bench's TestTelemetryHostileEndpoints holds the default cap (20,000) in a run.
const hostileMany = 10000

// hostile serves every way a metrics endpoint can misbehave, on 127.0.0.1.
func hostile(t *testing.T) string {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { writeText(w, vllmBody) })
	mux.HandleFunc("/500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(hangFor):
		}
	})
	mux.HandleFunc("/truncated", func(w http.ResponseWriter, r *http.Request) {
		conn, buf, _ := w.(http.Hijacker).Hijack()
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nvllm:num_requests_waiting 3\nvllm:num_requ")
		buf.Flush()
	})
	mux.HandleFunc("/nan", func(w http.ResponseWriter, r *http.Request) {
		writeText(w, "vllm:num_requests_waiting NaN NaN NaN\n")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		line := []byte(strings.Repeat("# filler comment line ", 40) + "\n")
		bw := bufio.NewWriterSize(w, 1<<16)
		for n := 0; n < 1<<30; n += len(line) {
			if _, err := bw.Write(line); err != nil {
				return
			}
		}
	})
	var many bytes.Buffer
	many.WriteString("# TYPE vllm:num_requests_waiting gauge\n")
	for i := range hostileMany {
		fmt.Fprintf(&many, "vllm:num_requests_waiting{i=\"%d\"} 1\n", i)
	}
	mux.HandleFunc("/many", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(many.Bytes()) })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func writeText(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(s))
}

func TestHostileEndpointsAreCountedNotFatal(t *testing.T) {
	base := hostile(t)
	paths := []string{"/ok", "/500", "/hang", "/truncated", "/nan", "/big", "/many"}
	var srcs []Source
	for _, p := range paths {
		srcs = append(srcs, Source{URL: base + p, Name: p})
	}
	sc := New(Config{Sources: srcs, Interval: time.Second, Filter: DefaultFilter(), MaxBody: 1 << 20, MaxSeries: 2000})
	// The scrape of /hang ends at the 1 s timeout (its sample says "timeout", below), not when
	// /hang answers: the first scrape takes less than the hang. Its time is mostly parsing
	// /many and /big, which the race detector on a busy machine stretches to seconds.
	start := time.Now()
	sc.Prime(t.Context())
	prime := time.Since(start)
	if prime >= hangFor {
		t.Errorf("the first scrape took %v: it waited for /hang's %v answer, not the 1 s timeout", prime, hangFor)
	}
	sc.Start()
	time.Sleep(1500 * time.Millisecond)
	stopAt := time.Now()
	samples := sc.Stop(true)
	// stop: the in-flight scrapes are cancelled, then the last one, the first scrape's work
	// again, takes at most the timeout: twice the first scrape's time, for a machine that
	// got busier, and the timeout
	if d := time.Since(stopAt); d > 2*prime+time.Second {
		t.Errorf("stop took %v; the first scrape %v", d, prime)
	}
	by := map[string][]Sample{}
	for _, s := range samples {
		by[s.Source] = append(by[s.Source], s)
	}
	want := map[string]string{"/500": "http 500", "/hang": "timeout", "/truncated": "unexpected EOF", "/nan": "parse", "/big": "body over 1048576 bytes"}
	for p, reason := range want {
		ss := by[p]
		if len(ss) < 2 {
			t.Errorf("%s: %d samples, want at least the first and the last", p, len(ss))
			continue
		}
		for _, s := range ss {
			if s.OK || !strings.Contains(s.Error, reason) || len(s.Series) > 0 {
				t.Errorf("%s: ok %v error %q series %d, want a failure with %q", p, s.OK, s.Error, len(s.Series), reason)
				break
			}
		}
	}
	// 10,000 series: the cap keeps 2,000 and counts the rest (under -race a scrape of them
	// may outlast the 1 s timeout; it is then a timeout, never more series)
	okMany := 0
	for _, s := range by["/many"] {
		switch {
		case s.OK && len(s.Series) == 2000 && s.Cut == hostileMany-2000:
			okMany++
		case !s.OK && s.Error == "timeout" && len(s.Series) == 0:
		default:
			t.Errorf("/many: ok %v, %d series, %d cut (%s); want 2000 kept and %d cut", s.OK, len(s.Series), s.Cut, s.Error, hostileMany-2000)
		}
	}
	if okMany == 0 {
		t.Errorf("/many: no scrape within the timeout")
	}
	if ok := by["/ok"]; len(ok) < 3 || !ok[0].OK {
		t.Errorf("/ok: %d samples", len(ok))
	}
}

func TestDefaultSourceDroppedAfterHTTPError(t *testing.T) {
	base := hostile(t)
	var notes []string
	// The interval is the scrape's timeout: 300 ms keeps the first scrape an HTTP error, not a
	// timeout, under -race on a busy machine (50 ms failed there), and three intervals would
	// show the source scraped again.
	sc := New(Config{Sources: []Source{{URL: base + "/500", Default: true}}, Interval: 300 * time.Millisecond,
		Note: func(s string) { notes = append(notes, s) }})
	sc.Prime(t.Context())
	sc.Start()
	time.Sleep(time.Second)
	if got := sc.Stop(true); len(got) != 1 || len(notes) != 1 {
		t.Errorf("%d samples and notes %q: want the one failed first sample and a note", len(got), notes)
	}
}

// TestThinningBoundsMemory: a buffer over its bound drops every other successful sample, keeps
// each source's first and newest, and counts what it dropped.
func TestThinningBoundsMemory(t *testing.T) {
	sc := &Scraper{cfg: Config{MaxBuffered: 20 << 10}}
	big := make([]record.Series, 20)
	for i := range big {
		big[i] = record.Series{Name: "vllm:num_requests_waiting", Type: "gauge"}
	}
	for i := range 200 {
		sc.add(Sample{Telemetry: record.Telemetry{Source: "a", OK: true, T: int64(i), Series: big}})
	}
	if sc.size > sc.cfg.MaxBuffered {
		t.Fatalf("buffer %d bytes over its bound %d", sc.size, sc.cfg.MaxBuffered)
	}
	n := len(sc.buf)
	total := 0
	for _, s := range sc.buf {
		total += 1 + s.Thinned
	}
	if sc.buf[0].T != 0 || sc.buf[n-1].T != 199 || total != 200 {
		t.Errorf("kept %d samples from %d to %d, accounting for %d; want 0..199 and all 200 accounted", n, sc.buf[0].T, sc.buf[n-1].T, total)
	}
}

func TestDefaultSources(t *testing.T) {
	for _, c := range []struct {
		family, api, want string
	}{
		{"servebench-sim", "openai-completions", "http://h:1/metrics"},
		{"vllm", "openai-chat", "http://h:1/metrics"},
		{"llama.cpp", "openai-completions", "http://h:1/metrics"},
		{"ollama", "ollama", ""},
		{"", "triton", ""},
		{"", "openai-completions", ""},
	} {
		src, note, ok := DefaultSource(c.family, c.api, "http://h:1/")
		if ok != (c.want != "") || src.URL != c.want || (!ok && note == "") {
			t.Errorf("%s/%s: %q %v %q", c.family, c.api, src.URL, ok, note)
		}
	}
}
