package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"servebench/exitcode"
)

// TestStartAtAlignsShards runs two shards of one open-loop run concurrently against the
// simulator, given one --start-at, and beside them two more given instants 2 s apart, and
// merges each pair: the headers keep the instant, the shards' first sends (wall clock, from
// the records) are as far apart as their instants, and the merged report states that skew,
// as information when they started together and as a warning 2 s apart. It runs beside the
// parallel tests: the skew of shards started together is the Go scheduler's lateness in
// waking them, which eight parallel neighbours on a busy machine stretched to 140 ms, so the
// run is long enough (60 arrivals at 10 req/s over the two shards: a window of about 5 s,
// whose 5% is the bound of "info") for that lateness to stay information; metrics' TestShardStartSkew
// holds the levels' bounds. A shard ready only after its instant (its workload took longer
// than the 6 s ahead to build: beside busy loops at load 16, 20 to 34 s) starts at once and
// says so; its pair's skew is then its lateness, and only the headers and the report's figure
// are checked. Before, it ran alone (40 arrivals a second), the two pairs one after the
// other: 17 s of the package's serial phase.
func TestStartAtAlignsShards(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	common := []string{"run", "--url", url, "--input-tokens", "16", "--output-tokens", "8",
		"--rate", "10", "--requests", "60", "--warmup", "4", "--seed", "3"}
	type merged struct {
		skew  time.Duration // from the records: the spread of the shards' first sends
		t0s   time.Duration // the spread of the shards' clock starts (t0, in the headers)
		warns []warning
		late  bool
	}
	// far enough ahead for all four to be ready on a busy machine (a shard ready late starts late)
	at := time.Now().Add(6 * time.Second).Truncate(time.Millisecond)
	type pairRun struct {
		name  string
		apart time.Duration
		files []string
		late  bool // a shard was ready only after its instant
	}
	pairs := []*pairRun{{name: "same"}, {name: "apart", apart: 2 * time.Second}}
	var wg sync.WaitGroup
	errs, stderrs := make([]string, 4), make([]string, 4)
	for k, p := range pairs {
		p.files = make([]string, 2)
		for i := range 2 {
			p.files[i] = filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", p.name, i))
			start := at.Add(time.Duration(i) * p.apart).UTC().Format(time.RFC3339Nano)
			wg.Go(func() {
				code, _, e := runMain(t, append(common, "--shard", fmt.Sprintf("%d/2", i), "--start-at", start, "-o", p.files[i])...)
				if stderrs[2*k+i] = e; code != 0 {
					errs[2*k+i] = fmt.Sprintf("%s shard %d: exit %d: %s", p.name, i, code, e)
				}
			})
		}
	}
	wg.Wait()
	if s := strings.Join(errs, ""); s != "" {
		t.Fatal(s)
	}
	// a shard ready only after its instant starts at once and says so (bench's waitStart):
	// its pair's skew is then how late it was ready, not how together the shards started
	for k, p := range pairs {
		for i := range 2 {
			if e := stderrs[2*k+i]; strings.Contains(e, "after it, starting now") {
				p.late = true
				t.Logf("%s shard %d was ready after its --start-at (a busy machine: its workload took more than 6 s to build): %s",
					p.name, i, strings.TrimSpace(e[strings.LastIndex(e[:strings.Index(e, "after it, starting now")], "\n")+1:]))
			}
		}
	}
	pair := func(p *pairRun) merged {
		var firsts, t0s []time.Time
		for i, f := range p.files {
			h, recs := readRecords(t, f)
			if want := at.Add(time.Duration(i) * p.apart); !h.StartAt.Equal(want) {
				t.Errorf("%s shard %d: header start_at %v, want %v", p.name, i, h.StartAt, want)
			}
			if h.Start.Before(h.StartAt) {
				t.Errorf("%s shard %d: t0 %v before its --start-at %v", p.name, i, h.Start, h.StartAt)
			}
			first := int64(math.MaxInt64)
			for _, r := range recs {
				if r.Sent > 0 {
					first = min(first, r.Sent)
				}
			}
			firsts, t0s = append(firsts, h.Start.Add(time.Duration(first))), append(t0s, h.Start)
			t.Logf("%s shard %d: t0 %v after its --start-at, first send %v after t0", p.name, i, h.Start.Sub(h.StartAt), time.Duration(first))
		}
		code, out, e := runMain(t, append([]string{"report", "--format", "json"}, p.files...)...)
		if code != 0 {
			t.Fatalf("%s: report: exit %d: %s", p.name, code, e)
		}
		var m struct {
			Warnings []warning `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		return merged{skew: firsts[1].Sub(firsts[0]).Abs(), t0s: t0s[1].Sub(t0s[0]).Abs(), warns: m.Warnings, late: p.late}
	}
	same, apart := pair(pairs[0]), pair(pairs[1])
	t.Logf("first sends apart: %v with one --start-at, %v with instants 2 s apart", same.skew, apart.skew)
	// the skew is the shards' start difference, give or take their first arrivals (~50 ms)
	if same.late || apart.late {
		t.Logf("a shard was ready late: the skews are not checked against each other")
	} else if apart.t0s < time.Second || (apart.skew-apart.t0s).Abs() > 500*time.Millisecond || same.skew > apart.skew/4 {
		t.Errorf("start skew %v with one --start-at, %v with instants 2 s apart (t0s %v apart): want about 0 and the t0s' spread",
			same.skew, apart.skew, apart.t0s)
	}
	figure := regexp.MustCompile(`start skew ([0-9.]+) (ms|s):`)
	for _, c := range []struct {
		name string
		m    merged
	}{{"same", same}, {"apart", apart}} {
		var w *warning
		for i := range c.m.warns {
			if strings.Contains(c.m.warns[i].Text, "start skew") {
				w = &c.m.warns[i]
			}
		}
		if w == nil {
			t.Errorf("%s: the merged report states no start skew: %v", c.name, c.m.warns)
			continue
		}
		t.Logf("%s: %s: %s", c.name, w.Level, w.Text)
		sub := figure.FindStringSubmatch(w.Text)
		if sub == nil {
			t.Errorf("%s: %q names no skew", c.name, w.Text)
			continue
		}
		v, _ := strconv.ParseFloat(sub[1], 64)
		if sub[2] == "ms" {
			v /= 1000
		}
		if math.Abs(v-c.m.skew.Seconds()) > 0.01 {
			t.Errorf("%s: the report says %q, the records %v", c.name, w.Text, c.m.skew)
		}
		if !c.m.late && (c.name == "apart") == (w.Level == "info") {
			t.Errorf("%s: %s at level %v", c.name, w.Text, w.Level)
		}
	}
}

// warning is a warning of the JSON summary.
type warning struct{ Level, Text string }

// TestStartAtRefused: a --start-at that is no time, is past, or is more than 24 h ahead is a
// usage error of one line, before any request (no records file).
func TestStartAtRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, v := range []string{"soon", "+0s", time.Now().Add(-time.Second).UTC().Format(time.RFC3339), "+25h",
		time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)} {
		out := filepath.Join(dir, "r.jsonl")
		code, _, e := runMain(t, "run", "-q", "--url", "http://127.0.0.1:1", "--start-at", v, "-o", out)
		if code != exitcode.Usage || strings.Count(strings.TrimSpace(e), "\n") != 0 || !strings.Contains(e, "--start-at") {
			t.Errorf("--start-at %q: exit %d, stderr %q; want exit 2 and one line", v, code, e)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--start-at %q: a records file was written", v)
		}
	}
}

// TestStartAtWaitInterrupted: Ctrl-C while a run waits for --start-at ends it at once with
// the interrupted code, leaving no records file (nothing was measured).
func TestStartAtWaitInterrupted(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	out := filepath.Join(t.TempDir(), "r.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &watchWriter{want: "--start-at: waiting", seen: make(chan struct{})}
	done := make(chan int, 1)
	start := time.Now()
	go func() {
		done <- Main(ctx, []string{"run", "--url", url, "--requests", "4", "--start-at", "+10m", "-o", out},
			strings.NewReader(""), io.Discard, stderr)
	}()
	select {
	case <-stderr.seen:
		cancel() // the first Ctrl-C
	case code := <-done:
		t.Fatalf("exit %d before waiting: %s", code, stderr.String())
	}
	code := <-done
	if code != exitcode.Interrupted {
		t.Errorf("exit %d, want %d: %s", code, exitcode.Interrupted, stderr.String())
	}
	if time.Since(start) > 5*time.Minute {
		t.Error("the run waited on after Ctrl-C")
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a records file was left")
	}
}

// watchWriter collects what is written and closes seen once it holds want.
type watchWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen chan struct{}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.b.String(), w.want)
	w.b.Write(p)
	if !had && strings.Contains(w.b.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestInterruptedBeforeTheRun: Ctrl-C while a run waits for its server (nothing listens yet)
// or for the server's model list (it holds the request) ends it at once with the interrupted
// code, not as a server fault.
func TestInterruptedBeforeTheRun(t *testing.T) {
	t.Parallel()
	held := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			select {
			case held <- struct{}{}:
			default:
			}
			<-r.Context().Done() // a server slow to list its models
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() // a port nothing listens on
	for _, c := range []struct {
		name, url string
		wait      func(stderr *watchWriter) <-chan struct{}
	}{
		{"waiting for the server", closed, func(stderr *watchWriter) <-chan struct{} { return stderr.seen }},
		{"listing models", srv.URL, func(*watchWriter) <-chan struct{} {
			ch := make(chan struct{})
			go func() { <-held; close(ch) }()
			return ch
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.jsonl")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stderr := &watchWriter{want: "waiting", seen: make(chan struct{})}
			seen := c.wait(stderr)
			done := make(chan int, 1)
			go func() {
				done <- Main(ctx, []string{"run", "--url", c.url, "--requests", "4", "--ready-timeout", "10m", "-o", out},
					strings.NewReader(""), io.Discard, stderr)
			}()
			select {
			case <-seen:
				cancel() // the first Ctrl-C
			case code := <-done:
				t.Fatalf("exit %d before the wait: %s", code, stderr.String())
			}
			if code := <-done; code != exitcode.Interrupted {
				t.Errorf("exit %d, want %d: %s", code, exitcode.Interrupted, stderr.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a records file was left")
			}
		})
	}
}
