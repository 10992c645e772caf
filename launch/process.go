package launch

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Redacted stands for an environment value that was kept out of the records; a start takes
// the value of the same name from servebench's own environment in its place.
const Redacted = "REDACTED"

// Process is a started server: its own process group, its output in a log file.
type Process struct {
	cmd     *exec.Cmd
	LogPath string
	Started time.Time
	done    chan struct{}
	waitErr error
	once    sync.Once
	stopped bool // Stop was called: the exit is ours, not the server's
	mu      sync.Mutex
}

// Start starts argv with env added to servebench's environment, in a process group of its
// own (so that a stop reaches whatever it starts in turn), its stdout and stderr appended to
// logPath. A command that cannot be started is an error naming it.
func Start(argv, env []string, logPath string) (*Process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("server log: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), fillEnv(env)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &Process{cmd: cmd, LogPath: logPath, Started: time.Now(), done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// fillEnv replaces each redacted value with the one of the same name in this environment.
func fillEnv(env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if v == Redacted {
			v = os.Getenv(k)
		}
		out[i] = k + "=" + v
	}
	return out
}

// PID is the server's process id (and its process group's).
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the server has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited says how the server ended, once Done is closed: "exited with status 1", "killed by
// signal 9"; "" while it runs or when it was stopped by Stop.
func (p *Process) Exited() string {
	select {
	case <-p.done:
	default:
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return ""
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	if p.waitErr != nil {
		return p.waitErr.Error()
	}
	return "exited with status 0"
}

// Stop ends the server: SIGTERM to its process group, then SIGKILL when it has not exited
// after grace. It returns once the server has exited, and is safe to call more than once.
// It reports whether the kill was needed.
func (p *Process) Stop(grace time.Duration) (killed bool) {
	p.once.Do(func() {
		p.mu.Lock()
		select {
		case <-p.done:
		default:
			p.stopped = true
		}
		p.mu.Unlock()
		pg := -p.cmd.Process.Pid
		_ = syscall.Kill(pg, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			killed = true
			_ = syscall.Kill(pg, syscall.SIGKILL)
			<-p.done
		}
		// what the server started in its group and left behind goes too
		_ = syscall.Kill(pg, syscall.SIGKILL)
	})
	return killed
}

// Tail is the last n lines of the server's log (for an error that says why it did not start).
func (p *Process) Tail(n int) string { return Tail(p.LogPath, n) }

// Tail is the last n lines of the file at path, each indented, or "" when it is empty.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(b) > 64<<10 {
		b = b[len(b)-64<<10:]
	}
	lines := strings.Split(strings.TrimRight(string(bytes.ToValidUTF8(b, []byte("?"))), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return "    " + strings.Join(lines, "\n    ")
}

// FreePort is a loopback port nothing listens on now, for a server that binds it moments
// later. It is drawn at random below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), where no other process's listen on port 0 and no
// outgoing connection is given it in the meantime: a port the kernel picked was, on a busy
// machine, taken by another simulator before the server bound it, and the readiness check
// then found that one answering. Where the range cannot be read, or none of the draws is
// free, it is the kernel's pick.
func FreePort() (int, error) {
	if lo := ephemeralLow(); lo > minDrawnPort+100 {
		for range 50 {
			port := minDrawnPort + rand.IntN(lo-minDrawnPort)
			if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
				l.Close()
				return port, nil
			}
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// minDrawnPort is the lowest port FreePort draws: above the well-known and most registered
// services' ports.
const minDrawnPort = 10000

// ephemeralLow is the low end of the kernel's ephemeral port range, or 0 when unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil || lo > 65535 {
		return 0
	}
	return lo
}
