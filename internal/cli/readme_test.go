package cli

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"servebench/exitcode"
	"servebench/shellwords"
)

// example is one servebench command line from a code block of a Markdown page.
type example struct {
	args       []string // without the program name
	comment    string   // the text after " #", if any
	background bool     // the line ends with "&"
	line       int      // where the command starts in its page
}

// docExamples returns every servebench command line in the code blocks of the Markdown page
// at path, with continuation lines joined and comments split off.
func docExamples(t *testing.T, path string) []example {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var exs []example
	inBlock, cur, comment, start, n := false, "", "", 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		if cur == "" {
			start = n
		}
		if i := strings.Index(line, " #"); i >= 0 {
			comment += strings.TrimSpace(line[i+2:]) + " "
			line = line[:i]
		}
		cur += " " + strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "\\"))
		if strings.HasSuffix(strings.TrimSpace(line), "\\") {
			continue
		}
		// words as a shell reads them: a quoted --server-cmd is one argument
		fields, err := shellwords.Split(cur)
		if err != nil {
			fields = strings.Fields(cur)
		}
		ex := example{comment: strings.TrimSpace(comment), line: start}
		cur, comment = "", ""
		if len(fields) == 0 || fields[0] != "servebench" {
			continue
		}
		if fields[len(fields)-1] == "&" {
			ex.background, fields = true, fields[:len(fields)-1]
		}
		ex.args = fields[1:]
		exs = append(exs, ex)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return exs
}

// docPages returns README.md and every topic page in docs/ (the generated docs/cli pages hold
// synopses such as "servebench run [flags]", not commands).
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "..", "README.md")}, pages...)
}

// TestReadmeCommandsParse checks that every servebench command in the README and the docs
// pages names a real subcommand and only real flags, so the pages cannot go stale.
func TestReadmeCommandsParse(t *testing.T) {
	t.Parallel()
	for _, page := range docPages(t) {
		exs := docExamples(t, page)
		if filepath.Base(page) == "README.md" && len(exs) < 5 {
			t.Fatalf("found only %d servebench commands in README.md", len(exs))
		}
		for _, ex := range exs {
			root := newRoot(&streams{})
			cmd, rest, err := root.Find(ex.args)
			if err != nil || cmd == root {
				t.Errorf("%s:%d: servebench %s: no such subcommand (%v)", page, ex.line, strings.Join(ex.args, " "), err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%s:%d: servebench %s: %v", page, ex.line, strings.Join(ex.args, " "), err)
			}
		}
	}
}

// TestReadmeLayout holds the README to a tour's size and checks that every page it links to
// exists.
func TestReadmeLayout(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines, more than 200: move reference text to a docs/ page", len(lines))
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("README.md:%d is %d characters long, more than 120", i+1, n)
		}
	}
	for _, m := range regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`).FindAllStringSubmatch(string(b), -1) {
		if _, err := os.Stat(filepath.Join("..", "..", m[1])); err != nil {
			t.Errorf("README.md links to %s, which does not exist", m[1])
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a background command's writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReadmeTour runs the README's walk as written, command after command in one folder:
// a servebench command ending in "&" (the simulator) runs in the background until the next
// one replaces it, 127.0.0.1:8000 becomes a free loopback port, and a command whose comment
// says "exit N" must exit N (every other one 0). Each command is a process of its own (this
// binary re-executed as servebench) working in the walk's folder, as a reader's would, so
// the test changes no folder of its own. One flag is the test's: each new run and sweep
// point sends tourRequests requests instead of the README's 200 and 100 (the runs' length is
// what made the walk take two minutes; every command, its files and its exit code are the
// README's). It runs beside the parallel tests, and so does TestReadmeTourSweeps (from the
// walk's first sweep to its end): where the README's compare says exit 4 (regressed), its
// runs beside eight parallel neighbours and busy loops can be unsteady or noisy, and compare
// is right to answer exit 9 (PROVISIONAL) or 6 (INCONCLUSIVE) then; the walk accepts those
// only with compare's verdict line saying so (tourExitOK). That a regression of steady sides
// exits 4 is held from virtual-time records (TestCompareRegressedAndImproved), and that a
// provisional verdict exits 9 whatever it is by compare's TestExitCode. Before, this test
// ran alone, before the parallel ones: 42 s of the package's serial phase.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("the README's walk takes about half a minute")
	}
	t.Parallel()
	exs := docExamples(t, filepath.Join("..", "..", "README.md"))
	dir := t.TempDir()
	ran := walkTour(t, dir, exs[:firstSweep(t, exs)])
	if ran < 5 {
		t.Fatalf("the README's walk has only %d commands to run before its sweeps", ran)
	}
	for _, f := range []string{"first.jsonl", "base.jsonl", "cand.jsonl", "compare.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the walk did not write %s: %v", f, err)
		}
	}
}

// TestReadmeTourSweeps runs the README's walk from its first sweep to its end, as
// TestReadmeTour runs the rest, in a folder of its own, with the simulator the walk last
// started in the background before it. Its sweeps' exit codes, files and compare's exit 5 on
// the launch flag the configurations differ in do not depend on a quiet machine, so it runs
// beside the other parallel tests (16 s of the walk at a load average of 12, without -race).
func TestReadmeTourSweeps(t *testing.T) {
	if testing.Short() {
		t.Skip("the README's sweeps take about 20 s")
	}
	t.Parallel()
	exs := docExamples(t, filepath.Join("..", "..", "README.md"))
	i := firstSweep(t, exs)
	var steps []example
	for _, ex := range exs[:i] {
		if ex.background {
			steps = []example{ex} // the simulator the sweeps run against
		}
	}
	dir := t.TempDir()
	if ran := walkTour(t, dir, append(steps, exs[i:]...)); ran < 3 {
		t.Fatalf("the README's walk has only %d commands to run from its first sweep", ran)
	}
	for _, f := range []string{"sweep.html", "tune.configs.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the walk did not write %s: %v", f, err)
		}
	}
}

// firstSweep is the index of the walk's first sweep command among exs.
func firstSweep(t *testing.T, exs []example) int {
	t.Helper()
	for i, ex := range exs {
		if len(ex.args) > 0 && ex.args[0] == "sweep" {
			return i
		}
	}
	t.Fatal("the README's walk has no sweep")
	return 0
}

// walkTour runs exs in dir as TestReadmeTour describes and returns how many commands ran in
// the foreground.
func walkTour(t *testing.T, dir string, exs []example) (ran int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// the walk's sweep --server-cmd starts `servebench sim` by name: this test binary, on the
	// PATH as servebench (TestMain runs it as the command, ChildEnv being in its environment)
	bin := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "servebench")); err != nil {
		t.Skipf("no symbolic link here: %v", err)
	}
	// in the commands' environment only: the test process's own is left as it was
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}

	var stopBG func()
	defer func() {
		if stopBG != nil {
			stopBG()
		}
	}()
	exitRe := regexp.MustCompile(`\bexit (\d+)\b`)
	for _, ex := range exs {
		args := make([]string, len(ex.args))
		for i, a := range ex.args {
			args[i] = strings.ReplaceAll(a, "127.0.0.1:8000", addr)
		}
		if len(args) == 1 && args[0] == "run" {
			continue // the built-in simulator's run: TestReadmeMainJob
		}
		cmdline := "servebench " + strings.Join(ex.args, " ")
		if ex.background {
			if stopBG != nil {
				stopBG()
			}
			stopBG = startBackground(t, dir, env, args, addr)
			continue
		}
		want := 0
		if m := exitRe.FindStringSubmatch(ex.comment); m != nil {
			want, _ = strconv.Atoi(m[1])
		}
		args = shortenTour(args)
		began := time.Now()
		code, out, errs := servebenchIn(t, dir, env, args...)
		t.Logf("README.md:%d: %s: exit %d in %.1f s", ex.line, strings.Join(args, " "), code, time.Since(began).Seconds())
		if !tourExitOK(t, code, want, out) {
			t.Fatalf("README.md:%d: %s: exit %d, want %d\n%s\n%s", ex.line, cmdline, code, want, out, errs)
		}
		ran++
	}
	return ran
}

// tourExitOK says whether a walk command's exit code is the one its README comment gives:
// that code, or, where the README says exit 4 (regressed), what a busy machine makes of the
// walk's runs (TestReadmeTour): exit 9 with compare's verdict line PROVISIONAL REGRESSED (or
// PROVISIONAL INCONCLUSIVE) because a side was not steady, or exit 6 with its line
// INCONCLUSIVE (runs too noisy for the threshold); never no change, improved or not comparable.
func tourExitOK(t *testing.T, code, want int, out string) bool {
	t.Helper()
	if code == want {
		return true
	}
	if want != exitcode.Regression || code != exitcode.Provisional && code != exitcode.Inconclusive {
		return false
	}
	for _, l := range strings.Split(out, "\n") {
		provisional := strings.Contains(l, "PROVISIONAL REGRESSED") || strings.Contains(l, "PROVISIONAL INCONCLUSIVE")
		if code == exitcode.Provisional && provisional && strings.Contains(l, " not steady (") ||
			code == exitcode.Inconclusive && strings.Contains(l, "INCONCLUSIVE: the interval of ") {
			t.Logf("exit %d where the README says 4: the walk's runs on this machine: %s", code, strings.TrimSpace(l))
			return true
		}
	}
	return false
}

// tourRequests is the requests of each new run of the README's walk in TestReadmeTour: four
// rounds of the walk's 16 users, enough for the steady-state check and compare's verdict (a
// 79% TTFT rise) to read as the README shows them.
const tourRequests = "64"

// tourSweepRequests is the requests of each point of the walk's sweeps. Nothing the test
// checks reads a sweep's figures (its exit code and files, and compare's exit 5 on the
// launch flag the two configurations differ in), and a point of 2 users sends its requests
// two at a time: at 64 they took more than half the walk's time (66 of 122 s).
const tourSweepRequests = "16"

// shortenTour gives a README run tourRequests requests and a sweep tourSweepRequests a point
// (the last --requests wins). A --like run keeps its baseline's, as the README's replay does.
func shortenTour(args []string) []string {
	if len(args) == 0 || args[0] != "run" && args[0] != "sweep" || slices.Contains(args, "--like") {
		return args
	}
	n := tourRequests
	if args[0] == "sweep" {
		n = tourSweepRequests
	}
	return append(slices.Clone(args), "--requests", n)
}

// servebenchIn runs servebench with args in dir, as a process of its own with env added to its
// environment (a later value of a variable wins), and returns its exit code and output.
func servebenchIn(t *testing.T, dir string, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := servebench(t, args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("servebench %s: %v", strings.Join(args, " "), err)
		}
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// startBackground runs a servebench command (the simulator) in dir, with env added to its
// environment, until the returned function stops it (Ctrl-C, as a reader would), and waits
// until it answers HTTP on addr.
func startBackground(t *testing.T, dir string, env, args []string, addr string) (stop func()) {
	t.Helper()
	cmd := servebench(t, args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, env...)
	var errs syncBuffer
	cmd.Stdout, cmd.Stderr = &errs, &errs
	if err := cmd.Start(); err != nil {
		t.Fatalf("servebench %s: %v", strings.Join(args, " "), err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	stop = func() {
		if cmd.Process.Signal(os.Interrupt) == nil {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Second):
			}
		}
		_ = cmd.Process.Kill()
		<-done
	}
	// ours, not another test's server that took the port first: it says it listens there
	listening := "listening on http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v1/models")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(errs.String(), listening) {
				return stop
			}
		}
		select {
		case <-done:
			t.Fatalf("servebench %s: exit %d before it answered: %s", strings.Join(args, " "), cmd.ProcessState.ExitCode(), errs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("servebench %s did not answer on %s within 30 s: %s", strings.Join(args, " "), addr, errs.String())
		}
	}
}

// TestReadmeMainJob runs the README's main job as written — `servebench run` with no flags,
// against the built-in simulator — and checks that it prints a summary.
func TestReadmeMainJob(t *testing.T) {
	if testing.Short() {
		t.Skip("the README's main job takes about 15 s")
	}
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	// The set-up's first command is the main job itself, not a build step.
	if !strings.Contains(string(readme), "go run ./cmd/servebench run ") {
		t.Error("README's set-up does not start with `go run ./cmd/servebench run`")
	}
	dir := t.TempDir()
	code, out, errs := servebenchIn(t, dir, nil, "run")
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
