package launch

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseConfigAndExpand(t *testing.T) {
	c, err := ParseConfig("p4: OLLAMA_NUM_PARALLEL=4 -np 4 --flash-attn")
	if err != nil || c.Name != "p4" || !slices.Equal(c.Env, []string{"OLLAMA_NUM_PARALLEL=4"}) || !slices.Equal(c.Args, []string{"-np", "4", "--flash-attn"}) {
		t.Fatalf("ParseConfig = %+v, %v", c, err)
	}
	for _, bad := range []string{"no colon", ": -np 4", "a b: -np 4", `x: "open`} {
		if _, err := ParseConfig(bad); err == nil {
			t.Errorf("ParseConfig(%q) = nil error", bad)
		}
	}
	got, _ := Expand("srv --port {port}", c)
	if got != "srv --port {port} -np 4 --flash-attn" {
		t.Errorf("Expand appended = %q", got)
	}
	got, _ = Expand("srv {args} --port {port}", Config{Args: []string{"-m", "a b"}})
	if got != "srv -m 'a b' --port {port}" {
		t.Errorf("Expand at {args} = %q", got)
	}
	argv, _ := Argv(got, 8123)
	if !slices.Equal(argv, []string{"srv", "-m", "a b", "--port", "8123"}) {
		t.Errorf("Argv = %q", argv)
	}
	if err := CheckNames([]Config{{Name: "a"}, {Name: "a"}}); err == nil {
		t.Error("CheckNames of two configurations named a = nil error")
	}
}

func TestLoadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(p, []byte("- name: np1\n  args: -np 1\n- name: np4\n  args: [-np, \"4\"]\n  env: {B: \"2\", A: \"1\"}\n"), 0o644)
	cs, err := LoadFile(p)
	if err != nil || len(cs) != 2 || !slices.Equal(cs[0].Args, []string{"-np", "1"}) || !slices.Equal(cs[1].Args, []string{"-np", "4"}) ||
		!slices.Equal(cs[1].Env, []string{"A=1", "B=2"}) {
		t.Fatalf("LoadFile = %+v, %v", cs, err)
	}
	os.WriteFile(p, []byte("- args: -np 1\n"), 0o644)
	if _, err := LoadFile(p); err == nil || !strings.Contains(err.Error(), "entry 1") {
		t.Errorf("LoadFile of an entry without a name: %v", err)
	}
}

// alive reports whether pid runs (a zombie, exited but not yet reaped, does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || !strings.Contains(string(b), ") Z ")
}

func TestStopTermThenKill(t *testing.T) {
	dir := t.TempDir()
	// one that ends on SIGTERM, and one that ignores it and must be killed after the grace;
	// the second's child (sleep, in the same group) goes with it
	p, err := Start([]string{"sleep", "60"}, nil, filepath.Join(dir, "a.log"))
	if err != nil {
		t.Fatal(err)
	}
	if killed := p.Stop(5 * time.Second); killed || alive(p.PID()) {
		t.Errorf("sleep: killed %v, alive %v after Stop", killed, alive(p.PID()))
	}
	if ex := p.Exited(); ex != "" {
		t.Errorf("a stopped server's Exited = %q, want \"\" (the exit was ours)", ex)
	}
	q, err := Start([]string{"sh", "-c", `trap "" TERM; echo started; sleep 60 & wait`}, []string{"X=1"}, filepath.Join(dir, "b.log"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the trap set before the signal
	if killed := q.Stop(300 * time.Millisecond); !killed || alive(q.PID()) {
		t.Errorf("TERM-ignoring server: killed %v, alive %v after Stop", killed, alive(q.PID()))
	}
	if tail := q.Tail(5); !strings.Contains(tail, "started") {
		t.Errorf("Tail = %q", tail)
	}
}

func TestUpFailures(t *testing.T) {
	dir := t.TempDir()
	never := func(ctx context.Context, url string) error { <-ctx.Done(); return ctx.Err() }
	_, err := Up(context.Background(), "sh -c 'echo bad flag >&2; exit 3' {port}", nil, "", filepath.Join(dir, "x.log"), time.Second, never)
	f := AsFailure(err)
	if f == nil || f.Stage != "start" || !strings.Contains(f.Error(), "exited with status 3") || !strings.Contains(f.Error(), "bad flag") {
		t.Errorf("a command that exits at once: %v", err)
	}
	_, err = Up(context.Background(), "no-such-program-here {port}", nil, "", filepath.Join(dir, "y.log"), time.Second, never)
	if f := AsFailure(err); f == nil || f.Stage != "start" {
		t.Errorf("a command that cannot start: %v", err)
	}
	timeout := func(ctx context.Context, url string) error { return errors.New("not ready after 1ms") }
	_, err = Up(context.Background(), "sleep 60 {port}", nil, "", filepath.Join(dir, "z.log"), time.Second, timeout)
	if f := AsFailure(err); f == nil || f.Stage != "ready" || !strings.Contains(f.Error(), "not ready after") {
		t.Errorf("a server that never answers: %v", err)
	}
}

// TestFreePortBelowEphemeralRange: the port is free to bind and drawn below the kernel's
// ephemeral range, where no listen on port 0 or outgoing connection can take it first.
func TestFreePortBelowEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	if lo <= minDrawnPort+100 {
		t.Skipf("no ephemeral range to draw below here (low end %d)", lo)
	}
	seen := map[int]bool{}
	for range 20 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < minDrawnPort || port >= lo {
			t.Fatalf("port %d, want one in [%d, %d)", port, minDrawnPort, lo)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		l.Close()
		seen[port] = true
	}
	if len(seen) < 15 {
		t.Errorf("20 draws gave %d ports: not drawn at random", len(seen))
	}
}
