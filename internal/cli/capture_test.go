package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"servebench/capture"
	"servebench/exitcode"
	"servebench/internal/peertest"
	"servebench/sim"
)

var proxying = regexp.MustCompile(`proxying (http://\S+) to`)

// startCapture runs `servebench capture` in-process to upstream and returns its URL and a
// stop (the Ctrl-C) that returns the lines it wrote.
func startCapture(t *testing.T, upstream, out string, extra ...string) (string, func() []capture.Line) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errb := &watchWriter{want: "proxying ", seen: make(chan struct{})}
	done := make(chan int, 1)
	args := append([]string{"capture", "--listen", "127.0.0.1:0", "--upstream", upstream, "-o", out}, extra...)
	go func() { done <- Main(ctx, args, strings.NewReader(""), &bytes.Buffer{}, errb) }()
	select {
	case <-errb.seen: // the line naming its URL is written whole
	case code := <-done:
		cancel()
		t.Fatalf("capture exited %d before it started: %s", code, errb.String())
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatalf("capture did not start: %s", errb.String())
	}
	m := proxying.FindStringSubmatch(errb.String())
	if m == nil {
		cancel()
		t.Fatalf("capture named no URL: %s", errb.String())
	}
	url := m[1]
	return url, func() []capture.Line {
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("capture: exit %d\n%s", code, errb.String())
		}
		t.Logf("%s", errb.String())
		return readCapture(t, out)
	}
}

func readCapture(t *testing.T, path string) []capture.Line {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []capture.Line
	for l := range strings.Lines(string(b)) {
		var c capture.Line
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, c)
	}
	return out
}

// reuse is the share of a capture's prompt tokens the server served from its cache, and the
// share of its blocks that repeat an earlier line's (its prefix reuse by design).
func reuse(lines []capture.Line) (cached, blocks float64) {
	var c, in, rep, all int
	seen := map[int]bool{}
	for _, l := range lines {
		if l.CachedTokens != nil {
			c += *l.CachedTokens
		}
		in += l.InputLength
		for _, id := range l.HashIDs {
			if seen[id] {
				rep++
			}
			seen[id] = true
		}
		all += len(l.HashIDs)
	}
	return float64(c) / float64(in), float64(rep) / float64(all)
}

// compareReplay checks a replay's capture against the original's: as many requests, the same
// lengths (exact, as a multiset: requests that arrive within a millisecond may swap; only
// logged where the replay said it could not build them exactly), arrival
// offsets within bound at p99, the repeated share within 5 points and the cached share
// within cachedPts.
func compareReplay(t *testing.T, a, b []capture.Line, bound time.Duration, exact bool, cachedPts float64) {
	t.Helper()
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("the original captured %d requests, the replay %d", len(a), len(b))
	}
	lengths := func(ls []capture.Line) [][2]int {
		var out [][2]int
		for _, l := range ls {
			out = append(out, [2]int{l.InputLength, l.OutputLength})
		}
		slices.SortFunc(out, func(x, y [2]int) int { return x[0]*1e6 + x[1] - y[0]*1e6 - y[1] })
		return out
	}
	if la, lb := lengths(a), lengths(b); !slices.Equal(la, lb) && exact {
		t.Errorf("lengths differ:\noriginal %v\nreplay   %v", la, lb)
	} else if !slices.Equal(la, lb) {
		t.Logf("lengths differ (the replay could not build them exactly):\noriginal %v\nreplay   %v", la, lb)
	}
	var d []float64
	for i := range a {
		d = append(d, math.Abs(b[i].Timestamp-a[i].Timestamp))
	}
	slices.Sort(d)
	p50, p99 := d[len(d)/2], d[min(len(d)-1, int(math.Ceil(0.99*float64(len(d))))-1)]
	ca, ra := reuse(a)
	cb, rb := reuse(b)
	t.Logf("%d requests; arrival offsets apart p50 %.2f ms, p99 %.2f ms; cached %.1f%% then %.1f%%; repeated blocks %.1f%% then %.1f%%",
		len(a), p50, p99, 100*ca, 100*cb, 100*ra, 100*rb)
	if p50 > 10 || p99 > float64(bound.Milliseconds()) {
		t.Errorf("arrival offsets apart by %.2f ms at p50 and %.2f ms at p99: want at most 10 ms and %v", p50, p99, bound)
	}
	if math.Abs(ca-cb) > cachedPts/100 || math.Abs(ra-rb) > 0.05 {
		t.Errorf("cached share %.1f%% then %.1f%%, repeated blocks %.1f%% then %.1f%%: want within %g and 5 points", 100*ca, 100*cb, 100*ra, 100*rb, cachedPts)
	}
}

// captureAndReplay sends a mixed workload (shared prefixes, then sessions) through a capture
// to upstream, replays the captured file through a second capture to the same server, and
// compares the two captures.
func captureAndReplay(t *testing.T, upstream string, bound time.Duration, cachedPts float64, load ...[]string) {
	dir := t.TempDir()
	url, stop := startCapture(t, upstream, filepath.Join(dir, "original.jsonl"), "--block-tokens", "16")
	for i, args := range load {
		args = append([]string{"run", "--url", url, "--api", "openai-completions", "-o", filepath.Join(dir, "run"+string(rune('0'+i))+".jsonl")}, args...)
		if code, out, errs := runMain(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	original := stop()
	url, stop = startCapture(t, upstream, filepath.Join(dir, "replay.jsonl"), "--block-tokens", "16")
	code, out, errs := runMain(t, "run", "--url", url, "--api", "openai-completions", "--dataset", "mooncake:"+filepath.Join(dir, "original.jsonl"),
		"--block-tokens", "16", "--warmup", "0", "--prewarm-connections", "-o", filepath.Join(dir, "replayed.jsonl"))
	if code != 0 && code != exitcode.Invalid {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errs)
	}
	if testing.Verbose() {
		t.Logf("replay:\n%s%s", out, errs)
	}
	compareReplay(t, original, stop(), bound, !strings.Contains(errs, "lengths approximate"), cachedPts)
}

// mixedLoad is a shared-prefix run and a session run, without warmup so the test stays short.
var mixedLoad = [][]string{
	{"--prefix-groups", "4", "--prefix-tokens", "96", "--input-tokens", "128", "--output-tokens", "8", "--requests", "32", "--rate", "16", "--warmup", "0"},
	{"--turns", "3", "--input-tokens", "48", "--output-tokens", "8", "--requests", "6", "--rate", "6", "--warmup", "0"},
}

// TestCaptureReplaySim: a workload captured through the proxy and replayed from the capture
// against the same simulator (its prefix cache on) arrives at the same offsets, with the same
// lengths, and is served from the cache as much (within 5 points).
func TestCaptureReplaySim(t *testing.T) {
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 0, 0 }) // the engine model, with its prefix cache
	// generous: the machine running the suite is shared (a stalled client sends late); the
	// figures are logged, and measured ones are in docs/workloads.md
	captureAndReplay(t, url, time.Second, 5, mixedLoad...)
}

// TestCaptureReplayLlamaCpp is TestCaptureReplaySim against llama.cpp (its slots' prompt
// cache); it skips where the peer cannot be set up.
func TestCaptureReplayLlamaCpp(t *testing.T) {
	url := peertest.Llama(t, "mini.gguf", "-t", "1", "-np", "4", "-c", "8192")
	// llama.cpp serves a prefix from the slot a request lands on, and which slot that is
	// depends on what else is in flight, so its cached share moves between two sendings of
	// one workload (54.7–60.3% seen; the share repeated by design stays within 5 points):
	// held to 10 points here, the gap in docs/workloads.md
	captureAndReplay(t, url, time.Second, 10, mixedLoad...)
}

// TestCaptureOutputs: an output that is an input, an existing file without --force and an
// unwritable path are refused before the proxy starts.
func TestCaptureOutputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := filepath.Join(dir, "t.json")
	if err := os.WriteFile(existing, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--tokenizer", existing, "-o", existing}, exitcode.Usage, "also an input"},
		{[]string{"-o", existing}, exitcode.Usage, "exists"},
		{[]string{"-o", filepath.Join(dir, "no", "such", "dir.jsonl")}, exitcode.Error, "output file"},
		{[]string{"-o", filepath.Join(dir, "x.jsonl"), "--upstream", "ftp://x"}, exitcode.Usage, "--upstream"},
	} {
		args := append([]string{"capture", "--upstream", "http://127.0.0.1:1", "--listen", "127.0.0.1:0"}, c.args...)
		code, _, errs := runMain(t, args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d %q, want %d and %q", c.args, code, errs, c.code, c.msg)
		}
	}
}
