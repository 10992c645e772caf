package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"servebench/exitcode"
	"servebench/sim"
)

// writePrompts writes prompts as a prompts file and returns its path.
func writePrompts(t *testing.T, name string, prompts []string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range prompts {
		line, _ := json.Marshal(map[string]any{"prompt": p, "output_tokens": 2})
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wordsFrom is n distinct words numbered from first.
func wordsFrom(first, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = "w" + strconv.Itoa(first+i)
	}
	return strings.Join(ws, " ")
}

// byDesign reads the cache note's two figures: the share the workload repeats by design and
// the share the server served from its cache (percent).
var byDesign = regexp.MustCompile(`the workload repeats ([0-9.]+)% of its prompt tokens by design; the server served ([0-9.]+)% from its prefix cache`)

// TestRepeatsByDesignValid: a workload that repeats prompt prefixes by design is judged against
// what it repeats, whatever its source. A prompts file of 4 groups of 24 prompts that share a
// 1,024-word prefix per group, sent once to the simulator with its prefix cache, is VALID and
// the note states both shares (about 90% each: 23 of 24 prompts of a group repeat the prefix);
// the same file sent again to the same simulator (a replay on a warm cache) is INVALID, with
// both shares. One prompt sent six times is VALID too.
func TestRepeatsByDesignValid(t *testing.T) {
	t.Parallel()
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 0, 0 }) // the engine model, with its prefix cache
	var prompts []string
	for g := range 4 {
		prefix := wordsFrom(100000*g, 1024)
		for i := range 24 {
			prompts = append(prompts, prefix+" x"+wordsFrom(100000*g+2000+100*i, 63))
		}
	}
	file := writePrompts(t, "groups.jsonl", prompts)
	args := []string{"run", "--url", url, "--prompts", file, "--requests", "96", "--concurrency", "4"}
	dir := t.TempDir() // each run its own -o: the default name is by the second, and parallel tests collide on it
	code, first, errs := runMain(t, append(args, "-o", filepath.Join(dir, "first.jsonl"))...)
	if code != 0 {
		t.Fatalf("the prefix-group file, sent once: exit %d, want 0 (VALID)\n%s%s", code, first, errs)
	}
	m := byDesign.FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("no note with both shares:\n%s", first)
	}
	design, served := atof(t, m[1]), atof(t, m[2])
	if design < 85 || design > 95 || served < 85 || served > design+5 {
		t.Errorf("by design %.1f%%, served %.1f%%: want both about 90%% (23 of 24 prompts repeat a 1,024-word prefix of 1,088 words)", design, served)
	}
	t.Logf("sent once: by design %.1f%%, served %.1f%%", design, served)

	code, again, _ := runMain(t, append(args, "-o", filepath.Join(dir, "again.jsonl"))...)
	if code != exitcode.Invalid || !strings.Contains(again, "INVALID") {
		t.Fatalf("the same file again on a warm cache: exit %d, want %d (INVALID)\n%s", code, exitcode.Invalid, again)
	}
	replay := regexp.MustCompile(`served \d+ of \d+ prompt tokens \((\d+)%\) from its prefix cache, \d+ points more than the workload repeats by design \(([0-9.]+)%\)`).FindStringSubmatch(again)
	if replay == nil || atof(t, replay[1]) < 99 || atof(t, replay[2]) != design {
		t.Errorf("the replay's INVALID note does not give both shares (served ≥ 99%%, by design %.1f%%): %q\n%s", design, replay, again)
	}

	one := writePrompts(t, "one.jsonl", []string{wordsFrom(500000, 200)})
	code, six, errs := runMain(t, "run", "--url", url, "--prompts", one, "--requests", "6", "--warmup", "0", "--concurrency", "1",
		"-o", filepath.Join(dir, "six.jsonl"))
	if code != 0 {
		t.Fatalf("one prompt sent six times: exit %d, want 0 (VALID)\n%s%s", code, six, errs)
	}
	m = byDesign.FindStringSubmatch(six)
	if m == nil || atof(t, m[1]) < 83 || atof(t, m[1]) > 84 {
		t.Errorf("one prompt six times: want 83.3%% by design (5 of 6 sent again): %q\n%s", m, six)
	}
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(fmt.Errorf("%q: %w", s, err))
	}
	return v
}
