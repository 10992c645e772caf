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
	"servebench/record"
	"servebench/sim"
	"servebench/stat"
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
// logged where the replay said it could not build them exactly), arrival offsets at p50
// within 5 ms beyond the two sending clients' own send lateness (late90, the original run's
// p90 and the replay's added) and at p99 within the replaying client's own send lateness
// (late99, its p99) and proxyStall, the repeated share within 5 points and the cached share
// within cachedPts. The clients' lateness is the reference taken in the same test: beside
// parallel neighbours on a busy machine it is what moves the arrivals (an offset misread or
// misscheduled by the replay moves them by tens of ms and more over its 2.6 s).
//
// Each capture counts its offsets from its own first request, and a replay whose first request
// went out a few ms late (its first connection, a descheduled client) moves every other offset
// by as much without any of them being sent at the wrong time: the replay's offsets are set
// against the original's after taking away their median difference, which is logged.
func compareReplay(t *testing.T, a, b []capture.Line, late90, late99 time.Duration, exact bool, cachedPts float64) {
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
	la, lb := lengths(a), lengths(b)
	if !slices.ContainsFunc(a, func(l capture.Line) bool { return l.SessionID != "" }) {
		t.Error("the original capture has no session keys: servebench's own sessions must send theirs (as user)")
	}
	if sa, sb := sessionsOf(a), sessionsOf(b); sa != sb {
		t.Errorf("the original capture has %d sessions, the replay's %d: a replayed row must send its recorded session key", sa, sb)
	}
	left, equal := map[[2]int]int{}, 0 // the multisets' common part
	for _, l := range la {
		left[l]++
	}
	for _, l := range lb {
		if left[l] > 0 {
			left[l]--
			equal++
		}
	}
	if !slices.Equal(la, lb) && exact {
		t.Errorf("lengths differ (%d of %d equal):\noriginal %v\nreplay   %v", equal, len(la), la, lb)
	} else if !slices.Equal(la, lb) {
		t.Logf("lengths differ (the replay could not build them exactly; %d of %d equal):\noriginal %v\nreplay   %v", equal, len(la), la, lb)
	}
	// a session's later turns are held until the turn before ended (load/follow.go), late by
	// design, so arrivals are compared over the rows of no session: in mixedLoad they all come
	// first, before any session, in both captures
	n := 0
	for n < len(a) && a[n].SessionID == "" {
		n++
	}
	if n == 0 {
		t.Fatal("no request of no session to compare arrivals over")
	}
	shift, p50, p99 := arrivalGaps(a[:n], b[:n])
	ca, ra := reuse(a)
	cb, rb := reuse(b)
	t.Logf("%d requests, %d lengths equal; arrival offsets (of the %d of no session) apart p50 %.2f ms, p99 %.2f ms (replay shifted by %.2f ms; send lateness p90 %.2f ms (both clients), the replay's p99 %.2f ms); cached %.1f%% then %.1f%%; repeated blocks %.1f%% then %.1f%%",
		len(a), equal, n, p50, p99, shift, ms(late90), ms(late99), 100*ca, 100*cb, 100*ra, 100*rb)
	if bound50, bound99 := 5+ms(late90), ms(late99+proxyStall); p50 > bound50 || p99 > bound99 {
		t.Errorf("arrival offsets apart by %.2f ms at p50 and %.2f ms at p99: want at most %.2f ms (5 ms and the clients' lateness at p90) and %.2f ms (the replay's own lateness at p99 and %v)",
			p50, p99, bound50, bound99, proxyStall)
	}
	if math.Abs(ca-cb) > cachedPts/100 || math.Abs(ra-rb) > 0.05 {
		t.Errorf("cached share %.1f%% then %.1f%%, repeated blocks %.1f%% then %.1f%%: want within %g and 5 points", 100*ca, 100*cb, 100*ra, 100*rb, cachedPts)
	}
}

// sessionsOf counts the distinct session keys of a capture.
func sessionsOf(ls []capture.Line) int {
	keys := map[string]bool{}
	for _, l := range ls {
		if l.SessionID != "" {
			keys[l.SessionID] = true
		}
	}
	return len(keys)
}

// proxyStall is what an arrival may be off beyond the replaying client's own lateness: the
// time from a request's leaving the client to the proxy's stamping it, in either capture.
// The proxies run in the test's process on a machine the suite shares, and a stall there
// delays every request it holds: at load averages of 12 to 16 on 2 cores, 2 of 12 runs had a
// p99 past the client's lateness p99, by 120 ms and 81 ms (four requests in a row stamped 81 ms
// after they were sent); the others followed it to within 3 ms.
const proxyStall = 250 * time.Millisecond

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// arrivalGaps returns the median of the replay's offsets less the original's (ms), and the p50
// and p99 of how far each replayed offset is from its original once that median is taken away.
func arrivalGaps(a, b []capture.Line) (shift, p50, p99 float64) {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = b[i].Timestamp - a[i].Timestamp
	}
	shift, _ = stat.NearestRank(d, 50)
	for i := range d {
		d[i] = math.Abs(d[i] - shift)
	}
	p50, _ = stat.NearestRank(d, 50)
	p99, _ = stat.NearestRank(d, 99)
	return shift, p50, p99
}

// sendLateness is the pct percentile of how late the run in records dispatched its measured
// requests behind their schedule.
func sendLateness(t *testing.T, records string, pct float64) time.Duration {
	t.Helper()
	f, err := os.Open(records)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, recs, err := record.ReadAll(f)
	if err != nil {
		t.Fatalf("%s: %v", records, err)
	}
	var late []float64
	for _, r := range recs {
		if r.Phase == record.PhaseMeasure {
			late = append(late, float64(max(0, r.Dispatched-r.Scheduled)))
		}
	}
	if len(late) == 0 {
		t.Fatalf("%s: no measured requests", records)
	}
	v, _ := stat.NearestRank(late, pct)
	return time.Duration(v)
}

// captureAndReplay sends a mixed workload (shared prefixes, then sessions) through a capture
// to upstream, replays the captured file through a second capture to the same server, and
// compares the two captures.
func captureAndReplay(t *testing.T, upstream string, cachedPts float64, load ...[]string) {
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
	replayed := filepath.Join(dir, "replayed.jsonl")
	code, out, errs := runMain(t, "run", "--url", url, "--api", "openai-completions", "--dataset", "mooncake:"+filepath.Join(dir, "original.jsonl"),
		"--block-tokens", "16", "--warmup", "0", "--prewarm-connections", "-o", replayed)
	if code != 0 && code != exitcode.Invalid {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errs)
	}
	if testing.Verbose() {
		t.Logf("replay:\n%s%s", out, errs)
	}
	// the rows of no session that compareReplay compares are the first run's (mixedLoad)
	late90 := sendLateness(t, filepath.Join(dir, "run0.jsonl"), 90) + sendLateness(t, replayed, 90)
	compareReplay(t, original, stop(), late90, sendLateness(t, replayed, 99), !strings.Contains(errs, "lengths approximate"), cachedPts)
}

// mixedLoad is a shared-prefix run and a session run, without warmup so the test stays short.
var mixedLoad = [][]string{
	{"--prefix-groups", "4", "--prefix-tokens", "96", "--input-tokens", "128", "--output-tokens", "8", "--requests", "32", "--rate", "16", "--warmup", "0"},
	{"--turns", "3", "--input-tokens", "48", "--output-tokens", "8", "--requests", "6", "--rate", "6", "--warmup", "0"},
}

// TestCaptureReplaySim: a workload captured through the proxy and replayed from the capture
// against the same simulator (its prefix cache on) arrives at the same offsets, with the same
// lengths, and is served from the cache as much (within 5 points). It runs beside the
// parallel tests: its arrival bounds are the clients' own lateness, measured in the test.
func TestCaptureReplaySim(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 0, 0 }) // the engine model, with its prefix cache
	captureAndReplay(t, url, 5, mixedLoad...)
}

// TestCaptureReplayLlamaCpp is TestCaptureReplaySim against llama.cpp (its slots' prompt
// cache); it skips where the peer cannot be set up.
func TestCaptureReplayLlamaCpp(t *testing.T) {
	t.Parallel()
	url := peertest.Llama(t, "mini.gguf", "-t", "1", "-np", "4", "-c", "8192")
	// llama.cpp serves a prefix from the slot a request lands on, and which slot that is
	// depends on what else is in flight, so its cached share moves between two sendings of
	// one workload (54.7–60.3% seen; the share repeated by design stays within 5 points):
	// held to 10 points here, the gap in docs/workloads.md
	captureAndReplay(t, url, 10, mixedLoad...)
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
