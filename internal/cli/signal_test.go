package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"servebench/record"
	"servebench/selftest"
	"servebench/sim"
)

// servebench returns a command that runs servebench with args: this test binary,
// re-executed as the command by TestMain (the child runs Main behind StopOnSignals, the
// wiring cmd/servebench uses), so no second binary is built.
func servebench(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), selftest.ChildEnv+"=1")
	return cmd
}

// startRun starts `servebench run` against a slow simulator (each request streams for about
// a second) and returns once at least one record is on disk. The two-stage stop lives in the
// command's signal handling, so it is tested on a real process.
func startRun(t *testing.T) (*exec.Cmd, string, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("SIGINT is not deliverable to a process on Windows")
	}
	url := startSim(t, func(c *sim.Config) { c.TTFT, c.ITL = 20*time.Millisecond, 25*time.Millisecond })
	p := filepath.Join(t.TempDir(), "r.jsonl")
	cmd := servebench(t, "run", "--url", url, "--input-tokens", "16", "--output-tokens", "40",
		"--requests", "500", "--concurrency", "2", "--warmup", "0", "-o", p)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		// the records are written to a partial file beside the target until the run ends
		partial, _ := filepath.Glob(p + ".*.partial")
		var b []byte
		if len(partial) > 0 {
			b, _ = os.ReadFile(partial[0])
		}
		if bytes.Count(b, []byte("\n")) >= 2 { // the header and a record: requests are in flight
			return cmd, p, &out, &errb
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record after 20s: %s", errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wait waits for cmd to exit and returns its exit code.
func wait(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(20 * time.Second):
		t.Fatal("servebench did not exit within 20s of SIGINT")
		return -1
	}
}

// TestFirstSIGINTFinishesInFlight: the first Ctrl-C stops sending, lets the requests in
// flight finish, prints the partial summary and exits 0 with a valid records file.
func TestFirstSIGINTFinishesInFlight(t *testing.T) {
	t.Parallel()
	cmd, p, out, errb := startRun(t)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := wait(t, cmd); code != 0 {
		t.Fatalf("exit %d, want 0: %s", code, errb)
	}
	_, recs := readRecords(t, p)
	if len(recs) == 0 || len(recs) >= 500 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		if !r.OK() {
			t.Errorf("request %d: %s %s; in-flight requests should have finished", r.ID, r.ErrorClass, r.Error)
		}
	}
	if !strings.Contains(out.String(), "completed") || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("no partial summary:\nstdout %s\nstderr %s", out, errb)
	}
}

// TestSecondSIGINTCancels: a second Ctrl-C cancels the requests in flight, which are
// recorded as cancelled, and the records file is still valid.
func TestSecondSIGINTCancels(t *testing.T) {
	t.Parallel()
	cmd, p, out, errb := startRun(t)
	_ = cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(100 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGINT)
	code := wait(t, cmd)
	_, recs := readRecords(t, p)
	cancelled := 0
	for _, r := range recs {
		if r.ErrorClass == record.ErrCancelled {
			cancelled++
		} else if !r.OK() {
			t.Errorf("request %d: %s %s", r.ID, r.ErrorClass, r.Error)
		}
	}
	if cancelled == 0 {
		t.Errorf("no cancelled record after the second SIGINT (exit %d)\nstdout %s\nstderr %s", code, out, errb)
	}
	if code != 0 {
		t.Errorf("exit %d, want 0 (a stopped run is still a run): %s", code, errb)
	}
	// the note says what happened: the second stop cancelled them at once, long before the
	// 30 s grace period could have ended
	if all := out.String() + errb.String(); !strings.Contains(all, "cancelled at once") || strings.Contains(all, "end of the grace period") {
		t.Errorf("the note on the cancelled requests does not say the second stop cancelled them:\n%s", all)
	}
}
