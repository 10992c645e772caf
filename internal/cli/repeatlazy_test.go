package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servebench/bench"
	"servebench/exitcode"
	"servebench/record"
	"servebench/sim"
)

// TestHugeRepeatBuildsEachRunsPrompts: --repeat 100000000 builds the prompts of a bounded
// number of runs before the first request and each later run's when it starts, so its
// second run is sending within seconds, a stop ends it, and the header embeds the parts
// built up front (it used to build 3 × 10⁸ prompts first). The later runs' prompts are fresh
// ones, and --lora-modules reaches them as it reaches the first run's.
func TestHugeRepeatBuildsEachRunsPrompts(t *testing.T) {
	t.Parallel()
	_, url := startSimServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL = time.Millisecond, time.Millisecond
		c.Adapters = sim.LoRAList{"a1", "a2"}
	})
	p := filepath.Join(t.TempDir(), "r.jsonl")
	h := startHugeRepeat(t, url, p, "--lora-modules", "a1,a2")
	defer h.stop()
	h.waitForRun(t, upfrontRuns+4) // past the runs built up front
	stop, done, errs := h.stop, h.done, &h.errs
	stopped := time.Now()
	stop()
	select {
	case code := <-done:
		// the stop may cut the run in progress before its first measured request: that run
		// measured nothing and is INVALID (exit 7); the runs before it stand
		if code != 0 && (code != exitcode.Invalid || !strings.Contains(errs.String(), "no measured requests")) {
			t.Fatalf("exit %d: %s", code, errs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no exit within 60s of the stop")
	}
	t.Logf("ended %v after the stop", time.Since(stopped))
	hdr, recs := readRecords(t, p)
	if n := len(hdr.Workload.Parts); n < 2 || n > upfrontRuns {
		t.Errorf("header embeds %d parts, want 2 to %d", n, upfrontRuns)
	}
	prompts := map[string]int{}
	adapters := map[string]bool{}
	for _, r := range recs {
		if r.Run >= len(hdr.Workload.Parts) {
			adapters[r.Adapter] = true
		}
	}
	var embedded []json.RawMessage
	if err := json.Unmarshal(hdr.Workload.Requests, &embedded); err != nil {
		t.Fatal(err)
	}
	for _, q := range embedded {
		prompts[string(q)]++
	}
	if len(adapters) != 2 || adapters[""] {
		t.Errorf("adapters of the runs built late: %v, want a1 and a2", adapters)
	}
	for q, n := range prompts {
		if n > 1 {
			t.Errorf("an embedded prompt appears %d times: %.60s", n, q)
		}
	}
}

// hugeRepeat is a `run --repeat 100000000` of 32 tiny requests a run (4 of them warmup), 4
// users, in progress, whose context bounds the prompts built up front to 96
// (bench.WithUpfrontPrompts) in place of 1,024: the first 3 runs are built before the first
// request, every later one when it starts, as with 1,024 (bench's TestUpfrontParts holds the
// bound itself), after 96 requests instead of a thousand (45 to 60 s of these two tests).
type hugeRepeat struct {
	p    string
	stop context.CancelFunc
	done chan int
	errs bytes.Buffer
}

// upfrontPrompts is a hugeRepeat's bound on the prompts built before its first request.
const upfrontPrompts = 96

// upfrontRuns is the runs of a hugeRepeat whose prompts are built before its first request:
// 96 prompts up front, 32 a run.
const upfrontRuns = upfrontPrompts / 32

// startHugeRepeat starts `run --repeat 100000000` against url, writing p, with extra flags.
func startHugeRepeat(t *testing.T, url, p string, extra ...string) *hugeRepeat {
	t.Helper()
	ctx, stop := context.WithCancel(bench.WithUpfrontPrompts(context.Background(), upfrontPrompts))
	h := &hugeRepeat{p: p, stop: stop, done: make(chan int, 1)}
	args := append([]string{"run", "-q", "--url", url, "--repeat", "100000000", "--requests", "28", "--warmup", "4",
		"--concurrency", "4", "--input-tokens", "8", "--output-tokens", "2", "-o", p}, extra...)
	go func() { h.done <- Main(ctx, args, strings.NewReader(""), &bytes.Buffer{}, &h.errs) }()
	return h
}

// waitForRun waits (3 minutes at most) for a record of run r or later; it stops the run and
// fails the test if none comes. The wait is a guard against a hang, not a bound the tests
// hold (with 1,024 prompts up front, the thousand requests before the last up-front run took
// more than 60 s under -race at a load average of 20).
func (h *hugeRepeat) waitForRun(t *testing.T, r int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !hasRecordOfRun(h.p, r) {
		if time.Now().After(deadline) {
			h.stop()
			t.Fatalf("no record of run %d within 3 minutes: %s", r, h.errs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hasRecordOfRun reports whether the partial records file beside p holds a record of run r or
// later.
func hasRecordOfRun(p string, r int) bool {
	partial, _ := filepath.Glob(p + ".*.partial")
	if len(partial) == 0 {
		return false
	}
	b, _ := os.ReadFile(partial[0])
	lines := bytes.Split(b, []byte("\n"))
	for i := len(lines) - 1; i > 0 && i > len(lines)-20; i-- {
		var rec record.Record
		if err := json.Unmarshal(lines[i], &rec); err == nil && rec.Run >= r && rec.ID >= 0 {
			return true
		}
	}
	return false
}
