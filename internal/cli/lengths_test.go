package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servebench/record"
)

// TestLengthDistributions: a run with drawn lengths sends prompts of the drawn lengths (the
// simulator tokenizes, so they are exact), its hash covers them, the header keeps the spec,
// and --like replays the same workload.
func TestLengthDistributions(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	csv := filepath.Join(dir, "lengths.csv")
	if err := os.WriteFile(csv, []byte("input_tokens,output_tokens\n16,2\n48,6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, extra ...string) (*record.Header, []record.Record) {
		t.Helper()
		p := filepath.Join(dir, name)
		args := append([]string{"run", "-q", "--url", url, "--requests", "24", "--warmup", "0", "--concurrency", "4", "-o", p}, extra...)
		if code, _, errs := runMain(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errs)
		}
		return readRecords(t, p)
	}
	fixed, _ := run("fixed.jsonl", "--input-tokens", "32", "--output-tokens", "4")
	h, recs := run("normal.jsonl", "--input-dist", "normal:32,8", "--output-dist", "lognormal:4,1")
	if h.Config["input_dist"] != "normal:32,8" || h.Workload.Hash == fixed.Workload.Hash {
		t.Errorf("config %v, hash %s (fixed %s)", h.Config["input_dist"], h.Workload.Hash, fixed.Workload.Hash)
	}
	ins := map[int]bool{}
	for _, r := range recs {
		ins[r.InputTokens] = true
		if r.PromptTokens != r.InputTokens || r.OutputTokens != r.MaxTokens {
			t.Fatalf("request %d: server prompt %d for %d asked, output %d of %d", r.ID, r.PromptTokens, r.InputTokens, r.OutputTokens, r.MaxTokens)
		}
	}
	if len(ins) < 6 {
		t.Errorf("%d distinct input lengths in 24 requests of normal:32,8", len(ins))
	}
	like, _ := run("like.jsonl", "--like", filepath.Join(dir, "normal.jsonl"))
	if like.Workload.Hash != h.Workload.Hash {
		t.Errorf("--like replayed hash %s, baseline %s", like.Workload.Hash, h.Workload.Hash)
	}
	_, frecs := run("file.jsonl", "--lengths", "file:"+csv)
	for _, r := range frecs {
		if p := [2]int{r.InputTokens, r.MaxTokens}; p != [2]int{16, 2} && p != [2]int{48, 6} {
			t.Fatalf("drew %v, not a row of the file", p)
		}
	}
	_, mrecs := run("mix.jsonl", "--lengths", "mix:8x2@1,64x3@1")
	for _, r := range mrecs {
		if p := [2]int{r.InputTokens, r.MaxTokens}; p != [2]int{8, 2} && p != [2]int{64, 3} {
			t.Fatalf("drew %v, not a bucket", p)
		}
	}
}

func TestLengthSpecsRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--input-dist", "normal:512"},
		{"--output-dist", "uniform:1,2"},
		{"--lengths", "mix:512x128@0"},
		{"--lengths", "zipf:1"},
		{"--lengths", "file:/does/not/exist.csv"},
		{"--lengths", "mix:8x2", "--input-dist", "normal:8,1"},
		{"--input-dist", "normal:8,1", "--turns", "2"},
	} {
		code, _, errs := runMain(t, append([]string{"run", "--requests", "1"}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errs)
		}
	}
}
