package conditions

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Host returns the client side: CPU model, cores, OS and kernel, and the versions of
// servebench and Go. The client's own speed shows in client-side delays (TTFT from dispatch),
// so a baseline made on another load-generator machine is worth knowing about.
func Host(version string) Set {
	var s Set
	s.Add(ClientCPU, cpuModel(), Detected)
	s.Add(ClientCores, strconv.Itoa(runtime.NumCPU()), Detected)
	s.Add(ClientOS, runtime.GOOS+"/"+runtime.GOARCH, Detected)
	s.Add(ClientKernel, kernel(), Detected)
	s.Add(ClientVersion, version, Detected)
	s.Add(ClientGo, runtime.Version(), Detected)
	return s
}

// cpuModel reads the first "model name" of /proc/cpuinfo (Linux); "" elsewhere.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// kernel is the Linux kernel release; "" elsewhere.
func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
