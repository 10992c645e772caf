package capture

import (
	"bufio"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// procRoot is the proc filesystem read to find the server's process; a variable for tests.
var procRoot = "/proc"

// ServerProcess finds the process listening on the TCP port of the loopback URL base (the
// owner of the listening socket in /proc/net/tcp or tcp6, found through /proc/*/fd) and
// returns its pid, name and the pids of it and all its descendants (vLLM's engine and
// workers are child processes of the one that listens). Zero pid when it cannot be found:
// not Linux, the socket belongs to another user (its fds are not readable), or the port is
// forwarded into a container (the owner is then a proxy, or in another namespace).
func ServerProcess(base string) (pid int, name string, tree []int) {
	u, err := url.Parse(base)
	if err != nil {
		return 0, "", nil
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		switch u.Scheme {
		case "https":
			port = 443
		default:
			port = 80
		}
	}
	inodes := listeningInodes(port)
	if len(inodes) == 0 {
		return 0, "", nil
	}
	pid = socketOwner(inodes)
	if pid == 0 {
		return 0, "", nil
	}
	name, _ = readComm(pid)
	return pid, name, descendants(pid)
}

// listeningInodes are the socket inodes listening on port on a loopback or any-address.
func listeningInodes(port int) map[string]bool {
	out := map[string]bool{}
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		fh, err := os.Open(filepath.Join(procRoot, f))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Scan() // the column heads
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			ip, p, ok := parseProcAddr(fs[1])
			if ok && p == port && (ip.IsLoopback() || ip.IsUnspecified()) {
				out[fs[9]] = true
			}
		}
		fh.Close()
	}
	return out
}

// parseProcAddr reads /proc/net/tcp's "0100007F:1F90": the address as 32-bit words in host
// (little-endian) order, and the port in hex.
func parseProcAddr(s string) (net.IP, int, bool) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return nil, 0, false
	}
	b, err := hex.DecodeString(a)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return nil, 0, false
	}
	for i := 0; i+4 <= len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b), int(port), true
}

// socketOwner is the lowest pid with an fd on one of the inodes (a forked worker may share
// the socket; the parent has the lower pid), 0 when none is readable.
func socketOwner(inodes map[string]bool) int {
	owner := 0
	for _, pid := range pids() {
		dir := filepath.Join(procRoot, strconv.Itoa(pid), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			l, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err != nil || !strings.HasPrefix(l, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] {
				if owner == 0 || pid < owner {
					owner = pid
				}
				break
			}
		}
	}
	return owner
}

// pids lists the processes in procRoot.
func pids() []int {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// descendants is root and every process below it, from each process's parent in
// /proc/PID/stat.
func descendants(root int) []int {
	children := map[int][]int{}
	for _, pid := range pids() {
		if pp, ok := parentOf(pid); ok {
			children[pp] = append(children[pp], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	slices.Sort(out)
	return out
}

// parentOf reads the parent pid: the second field after the command name, which is in
// parentheses and may itself hold spaces and parentheses.
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	fs := strings.Fields(string(b[i+1:]))
	if len(fs) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(fs[1])
	return pp, err == nil
}

// readComm is the process's name; for a program started through the dynamic loader
// (ld-linux-x86-64.so.2 --library-path DIR PROGRAM ..., as Debian's llama-server is run from
// an unpacked root) the program's.
func readComm(pid int) (string, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "comm"))
	name := strings.TrimSpace(string(b))
	if err != nil || !strings.HasPrefix(name, "ld-linux") {
		return name, err
	}
	cl, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return name, nil
	}
	args := strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
	for i := 1; i < len(args); i++ {
		switch {
		case args[i] == "--library-path" || args[i] == "--preload" || args[i] == "--argv0" || args[i] == "--audit":
			i++ // the option's value
		case !strings.HasPrefix(args[i], "-"):
			return filepath.Base(args[i]), nil
		}
	}
	return name, nil
}
