package sim

import (
	"io"
	"testing"
	"time"
)

// TestLazyCompileOncePerBucket: each batch-size bucket and each prefill-length bucket costs
// the compile time once, and a step new in both pays twice.
func TestLazyCompileOncePerBucket(t *testing.T) {
	l := lazyCompile{cost: time.Second}
	for _, c := range []struct {
		seqs, prefill int
		want          time.Duration
	}{
		{1, 100, 2 * time.Second},       // batch 1 and prefill bucket 128: both new
		{1, 0, 0},                       // a decode step of one sequence
		{1, 120, 0},                     // the same buckets
		{3, 0, time.Second},             // batch bucket 4
		{4, 0, 0},                       // still 4
		{5, 128, time.Second},           // batch bucket 8; prefill 128 known
		{8, 129, time.Second},           // prefill bucket 256
		{600, 1 << 20, 2 * time.Second}, // batch bucket 512 and prefill capped at 512: both new
		{1 << 20, 513, 0},               // both capped at 512: known
	} {
		if got := l.compile(c.seqs, c.prefill); got != c.want {
			t.Errorf("compile(%d seqs, %d prefill) = %v, want %v", c.seqs, c.prefill, got, c.want)
		}
	}
	if off := (&lazyCompile{}).compile(1, 1); off != 0 {
		t.Errorf("off: %v", off)
	}
}

// TestLazyCompileOverHTTP: a served request pays the compile time of its shapes, the second
// request of the same shapes does not, and /version's phases and Phases count the compiling
// steps with their spans.
func TestLazyCompileOverHTTP(t *testing.T) {
	c := DefaultConfig()
	c.LazyCompile = 300 * time.Millisecond
	s, base := startSim(t, c)
	first := timedCompletion(t, base, words(64))
	second := timedCompletion(t, base, "x "+words(63)) // no prefix shared with the first

	// the first pays batch 1 and prefill 64 (0.6 s); the second only its roofline (ms)
	if first < 600*time.Millisecond || second > first/2 {
		t.Errorf("first request %v, second %v: want the first ≥ 600ms and the second well under it", first, second)
	}
	ph := s.Phases()
	if len(ph.Compiles) != 1 || ph.Compiles[0].End.Sub(ph.Compiles[0].Start) < 600*time.Millisecond {
		t.Errorf("compiles %+v, want one step of at least 600ms", ph.Compiles)
	}
	v := getVersionPhases(t, base)
	if v["compiles"] != 1 || v["last_compile_end_ns"] != ph.Compiles[0].End.UnixNano() {
		t.Errorf("/version phases %v, want 1 compile ending at %d", v, ph.Compiles[0].End.UnixNano())
	}
	if d := s.Describe(); d["lazy_compile"] != "300ms" {
		t.Errorf("Describe: lazy_compile %q", d["lazy_compile"])
	}
}

// timedCompletion sends a 4-token streamed completion of prompt and returns how long it took
// to its end.
func timedCompletion(t *testing.T, base, prompt string) time.Duration {
	t.Helper()
	start := time.Now()
	resp := post(t, base+"/v1/completions", completion(prompt, 4))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(start)
}

func getVersionPhases(t *testing.T, base string) map[string]int64 {
	t.Helper()
	var v struct {
		Phases map[string]int64 `json:"phases"`
	}
	getJSON(t, base+"/version", &v)
	return v.Phases
}
