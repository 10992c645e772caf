package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"servebench/exitcode"
)

// TestExpectChangeKeys: compare checks --expect-change names against the files' conditions
// before it compares anything (an unknown one is exit 2 naming the nearest keys, with nothing
// on stdout), takes comma lists, and a setting's name expects the conditions that follow from
// it. The pair stands for llama.cpp at -np 4 and -np 2 (its three conditions declared over
// the simulator's, as a run against llama.cpp detects them).
func TestExpectChangeKeys(t *testing.T) {
	t.Parallel()
	url := startSim(t, nil)
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, s := range []struct{ name, np, ctx string }{{"np4.jsonl", "4", "1024"}, {"np2.jsonl", "2", "2048"}} {
		code, _, errs := runMain(t, "run", "-q", "--url", url, "--requests", "4", "--warmup", "0", "--input-tokens", "16",
			"--output-tokens", "8", "--condition", "server.family=llama.cpp", "--condition", "batching.max_num_seqs="+s.np,
			"--condition", "model.max_model_len="+s.ctx, "--condition", "server.flag.ctx_per_slot="+s.ctx, "-o", p(s.name))
		if code != 0 {
			t.Fatalf("run %s: exit %d: %s", s.name, code, errs)
		}
	}
	compareExit := func(expect ...string) (int, string, string) {
		args := []string{"compare", p("np4.jsonl"), p("np2.jsonl"), "--threshold", "50"}
		for _, e := range expect {
			args = append(args, "--expect-change", e)
		}
		return runMain(t, args...)
	}
	if code, _, _ := compareExit(); code != exitcode.NotComparable {
		t.Errorf("no --expect-change: exit %d, want %d", code, exitcode.NotComparable)
	}
	for _, e := range [][]string{{"np"}, {"batching.max_num_seqs"}, {"server.version,np"}, {"server.version", "server.flag.np"}} {
		if code, out, errs := compareExit(e...); code == exitcode.NotComparable || code == exitcode.Usage {
			t.Errorf("--expect-change %q: exit %d:\n%s%s", e, code, out, errs)
		}
	}
	for e, want := range map[string]string{
		"server.flag.nq":    `--expect-change "server.flag.nq" names no condition of these files; nearest: server.flag.np`,
		"np,server.versoin": `--expect-change "server.versoin" names no condition of these files; nearest: server.version`,
		"a,b,c":             `--expect-change "a" names no condition of these files; nearest: `,
	} {
		code, out, errs := compareExit(e)
		if code != exitcode.Usage || !strings.Contains(errs, want) || out != "" {
			t.Errorf("--expect-change %q: exit %d, stderr %q, stdout %d bytes; want exit %d, %q and nothing on stdout", e, code, errs, len(out), exitcode.Usage, want)
		}
	}
}
