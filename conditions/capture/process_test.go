package capture

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"

	"servebench/conditions"
	"servebench/record"
)

// listen opens a listening socket on 127.0.0.1 in this process and returns its URL.
func listen(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the server's process is found through /proc: Linux only")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return "http://" + ln.Addr().String()
}

// TestServerProcess: the owner of a listening loopback socket is found, with its name.
func TestServerProcess(t *testing.T) {
	url := listen(t)
	pid, name, tree := ServerProcess(url)
	if pid != os.Getpid() || name == "" || len(tree) == 0 || tree[0] > pid {
		t.Fatalf("pid %d (%q) tree %v, want this process %d", pid, name, tree, os.Getpid())
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if pid, _, _ := ServerProcess(fmt.Sprintf("http://127.0.0.1:%d", port)); pid != 0 {
		t.Errorf("a closed port's owner found: %d", pid)
	}
}

// TestPlacementFromComputeApps: nvidia-smi lists the server's pid on a GPU: that GPU is the
// placement; it lists only another process: cpu, with the process named in the observation.
func TestPlacementFromComputeApps(t *testing.T) {
	url := listen(t)
	for _, tc := range []struct {
		apps, want string
	}{
		{fmt.Sprintf("%d, GPU-5d1c, 3972\n", os.Getpid()), "GPU-5d1c"},
		{"1, GPU-5d1c, 3972\n", conditions.PlacementCPU},
	} {
		stubSMI(t, func(args []string) (string, error) {
			switch {
			case strings.HasPrefix(args[0], "--query-compute-apps="):
				return tc.apps, nil
			case args[0] == "--query-gpu=memory.used":
				return "3975\n", nil
			}
			return "", fmt.Errorf("not stubbed")
		})
		s := Placement(context.Background(), url)
		if got := s.Value(conditions.Placement); got != tc.want {
			t.Errorf("placement %q, want %q", got, tc.want)
		}
		if got := s.Value(record.ObservedServerProcess); !strings.HasPrefix(got, fmt.Sprint(os.Getpid())+" ") {
			t.Errorf("server process %q", got)
		}
	}
	stubGPU(t, "")
	if s := Placement(context.Background(), url); len(s) != 0 {
		t.Errorf("placement without nvidia-smi: %v", s)
	}
}
