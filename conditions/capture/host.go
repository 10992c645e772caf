package capture

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"

	"servebench/conditions"
)

// Host returns the client side: CPU model, cores, OS and kernel, and the versions of
// servebench and Go. The client's own speed shows in client-side delays (TTFT from dispatch),
// so a baseline made on another load-generator machine is worth knowing about.
func Host(version string) conditions.Set {
	var s conditions.Set
	s.Add(conditions.ClientCPU, cpuModel(), conditions.Detected)
	s.Add(conditions.ClientCores, strconv.Itoa(runtime.NumCPU()), conditions.Detected)
	s.Add(conditions.ClientOS, runtime.GOOS+"/"+runtime.GOARCH, conditions.Detected)
	s.Add(conditions.ClientKernel, kernel(), conditions.Detected)
	s.Add(conditions.ClientVersion, version, conditions.Detected)
	s.Add(conditions.ClientGo, runtime.Version(), conditions.Detected)
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
