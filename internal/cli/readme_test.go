package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeCommands returns every servebench command line in README.md's code blocks, with
// continuation lines joined and comments removed.
func readmeCommands(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds [][]string
	inBlock, cur := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		cur += " " + strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "\\"))
		if strings.HasSuffix(strings.TrimSpace(line), "\\") {
			continue
		}
		fields := strings.Fields(cur)
		cur = ""
		if len(fields) > 0 && fields[0] == "servebench" {
			cmds = append(cmds, fields[1:])
		}
	}
	return cmds
}

// TestReadmeCommandsParse checks that every servebench command in the README names a real
// subcommand and only real flags, so the README cannot go stale.
func TestReadmeCommandsParse(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) < 5 {
		t.Fatalf("found only %d servebench commands in README.md", len(cmds))
	}
	for _, args := range cmds {
		root := newRoot(&streams{})
		cmd, rest, err := root.Find(args)
		if err != nil || cmd == root {
			t.Errorf("README: servebench %s: no such subcommand (%v)", strings.Join(args, " "), err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("README: servebench %s: %v", strings.Join(args, " "), err)
		}
	}
}

// TestReadmeMainJob runs the README's main job as written — `servebench run` with no flags,
// against the built-in simulator — and checks that it prints a summary.
func TestReadmeMainJob(t *testing.T) {
	if testing.Short() {
		t.Skip("the README's main job takes about 15 s")
	}
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code, out, errs := runMain(t, "run")
	if code != 0 {
		t.Fatalf("servebench run: exit %d: %s", code, errs)
	}
	for _, want := range []string{"SIMULATED", "200 completed", "TTFT", "records: servebench-"} {
		if !strings.Contains(out+errs, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, errs)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "servebench-*.jsonl"))
	if len(files) != 1 {
		t.Errorf("default records file: %v", files)
	}
}
